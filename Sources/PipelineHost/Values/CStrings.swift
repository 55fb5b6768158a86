import Glibc

/// Calls `body` with C copies of `strings` (NULL for nil), valid for the call: the one helper
/// the C shims' callers use to hand strings across (the Lua sandbox's stage names, a curl
/// transfer's URL and headers).
package func withCStrings<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let copies = strings.map { $0.map { strdup($0) } ?? nil }
    defer { for copy in copies { free(copy) } }
    return body(copies.map { $0.map { UnsafePointer($0) } })
}
