import CCurl
import Glibc
import PipelineHost

/// Reads a response's caching headers into `CacheHints`, the way a private HTTP cache would
/// (RFC 9111): Cache-Control max-age wins over Expires; no-cache means fresh for 0 seconds
/// (store, but revalidate before each use); no-store means keep nothing.
enum HTTPCacheHeaders {
    static func hints(_ headers: ph_cache_headers, now: Double) -> CacheHints {
        let cacheControl = headers.cache_control.map { String(cString: $0) }
        let directives = parse(cacheControl ?? "")
        var maxAge: Double?
        if directives["no-cache"] != nil {
            maxAge = 0
        } else if let value = directives["max-age"], let seconds = Double(value ?? "") {
            maxAge = max(0, seconds - Double(max(0, headers.age)))
        } else if headers.expires != nil {
            // An Expires that does not parse means "already expired" (RFC 9111 5.3).
            let date = headers.date_epoch >= 0 ? Double(headers.date_epoch) : now
            maxAge = headers.expires_epoch >= 0 ? max(0, Double(headers.expires_epoch) - date) : 0
        }
        return CacheHints(
            validators: Validators(
                etag: headers.etag.map { String(cString: $0) },
                lastModified: headers.last_modified.map { String(cString: $0) }),
            maxAge: maxAge, noStore: directives["no-store"] != nil,
            cacheControl: cacheControl, expires: headers.expires.map { String(cString: $0) })
    }

    /// "max-age=60, no-cache" -> ["max-age": "60", "no-cache": nil]; names lowercased.
    static func parse(_ header: String) -> [String: String?] {
        var directives: [String: String?] = [:]
        for part in header.split(separator: ",") {
            let pieces = part.split(separator: "=", maxSplits: 1)
            guard let name = pieces.first?.trimmed.lowercased(), !name.isEmpty else { continue }
            let value = pieces.count > 1 ? String(pieces[1].trimmed.filter { $0 != "\"" }) : nil
            directives[name] = .some(value)
        }
        return directives
    }
}

extension StringProtocol {
    fileprivate var trimmed: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[start...end])
    }
}
