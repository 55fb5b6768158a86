import Glibc

/// The process's environment variables whose names start with a prefix (`AWS_`, `OTEL_`), read
/// from `environ` directly: the standard configuration the S3 client and the trace exporter
/// check, in one reading.
package enum ProcessEnvironment {
    package static func variables(withPrefix prefix: String) -> [String: String] {
        var values: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if text.hasPrefix(prefix), let equals = text.firstIndex(of: "=") {
                values[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return values
    }
}
