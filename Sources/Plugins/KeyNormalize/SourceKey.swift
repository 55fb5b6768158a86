import PipelineHost

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The normalized form of a source location, built from `SourceLocation`'s split: scheme and
/// host lower-cased, user information, default port and fragment dropped, an empty path made
/// "/", and the query's items sorted by name (values of one name in their order) with the listed
/// names left out. Nothing is decoded, so a key keeps the source's own percent-escapes.
enum SourceKey {
    static func normalized(_ location: String, dropping dropped: Set<String>) throws(PipelineError) -> String {
        let url = SourceLocation(location)
        guard !url.isPlainPath else {
            // A plain path: its identity is the absolute path.
            return URL(fileURLWithPath: location).standardizedFileURL.absoluteString
        }
        guard let scheme = url.scheme, SourceLocation.isScheme(scheme) else {
            throw PipelineError(.invalidSource, "not a valid URL")
        }
        var key = scheme + ":"
        var path = url.resource.dropFirst(scheme.count + 1)
        if let authority = url.authority {
            let hostPort = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
            guard let (host, port) = Self.hostAndPort(hostPort) else {
                throw PipelineError(.invalidSource, "not a valid URL")
            }
            key += "//" + Self.normalizedHost(host)
            if let port, port != Self.defaultPort(scheme) { key += ":\(port)" }
            path = url.resource[authority.endIndex...]
            if path.isEmpty { path = "/" }
        }
        key += Escapes.escapingInvalid(path, allowed: Escapes.path)
        if let query = url.query, !query.isEmpty {
            let kept = Escapes.escapingInvalid(query, allowed: Escapes.query)
                .split(separator: "&", omittingEmptySubsequences: false)
                .enumerated()
                .map { (name: $1.prefix { $0 != "=" }, item: $1, position: $0) }
                .filter { !dropped.contains(String($0.name)) }
                // By name only: a name's values keep their order, since origins read "?id=a&id=b"
                // by position (the first, the last, or all in order) and a different order may
                // be a different image.
                .sorted { ($0.name, $0.position) < ($1.name, $1.position) }
            if !kept.isEmpty { key += "?" + kept.map(\.item).joined(separator: "&") }
        }
        return key
    }

    /// Host and port of an authority without user information; nil when the port is not a
    /// number. An empty port is no port.
    private static func hostAndPort(_ authority: Substring) -> (host: Substring, port: Int?)? {
        // An IPv6 literal is bracketed, and its colons are not a port's.
        let hostEnd =
            authority.hasPrefix("[")
            ? authority.firstIndex(of: "]").map(authority.index(after:)) ?? authority.endIndex
            : authority.firstIndex(of: ":") ?? authority.endIndex
        let host = authority[hostEnd...].isEmpty ? authority : authority[..<hostEnd]
        let rest = authority[hostEnd...]
        guard let colon = rest.first else { return (host, nil) }
        let digits = rest.dropFirst()
        guard colon == ":", digits.utf8.allSatisfy(\.isASCIIDigit) else { return nil }
        if digits.isEmpty { return (host, nil) }
        guard let port = Int(digits), port <= 65535 else { return nil }
        return (host, port)
    }

    /// A host lower-cased, its escapes decoded first so "%41" and "a" are one host.
    private static func normalizedHost(_ host: Substring) -> String {
        guard !host.hasPrefix("[") else { return host.lowercased() }
        return Escapes.escapingInvalid(
            host.removingPercentEncodingLossy.lowercased()[...], allowed: Escapes.host, keepEscapes: false)
    }

    private static func defaultPort(_ scheme: String) -> Int? {
        switch scheme {
        case "http": 80
        case "https": 443
        default: nil
        }
    }
}

/// Percent-escapes, RFC 3986's way: which bytes each part may hold as they are.
enum Escapes {
    private static func set(_ extra: String) -> [Bool] {
        (0..<128).map { code in
            let byte = UInt8(code)
            return byte.isASCIILetter || byte.isASCIIDigit || "-._~!$&'()*+,;=".utf8.contains(byte)
                || extra.utf8.contains(byte)
        }
    }

    static let host = set("")
    static let path = set(":@/")
    static let query = set(":@/?")

    /// `part` with every byte it may not hold written as %XX. Existing escapes (a "%" and two hex
    /// digits) stay as written unless `keepEscapes` is false.
    static func escapingInvalid(_ part: Substring, allowed: [Bool], keepEscapes: Bool = true) -> String {
        let bytes = Array(part.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if keepEscapes, byte == UInt8(ascii: "%"), index + 2 < bytes.count, bytes[index + 1].isHexDigit,
                bytes[index + 2].isHexDigit
            {
                out += bytes[index...(index + 2)]
                index += 3
                continue
            }
            if byte < 0x80, allowed[Int(byte)] {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]]
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
}

extension UInt8 {
    fileprivate var isASCIILetter: Bool { (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
    fileprivate var isASCIIDigit: Bool { (0x30...0x39).contains(self) }
    fileprivate var isHexDigit: Bool { isASCIIDigit || (0x41...0x46).contains(self) || (0x61...0x66).contains(self) }
}
