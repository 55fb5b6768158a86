/// The sources every reader reads alike.
///
/// `SourceLocation`'s split is lexical and never fails, and libcurl parses the same text its own
/// way. Where the two could disagree, one host's bytes could be fetched and filed under another
/// host's key, and a shared cache would then serve them to everyone. So a source is accepted
/// only when the split leaves nothing to guess: what passes here, libcurl's `curl_url` reads
/// with the same scheme, host and port (a differential test over generated URLs holds it so, and
/// the fetch stage checks it again on every transfer and every redirect).
extension SourceLocation {
    /// Why this source cannot be read without guessing, or nil when it can. Checked before any
    /// stage sees a source, by the source policy, and by the fetch stage.
    public var ambiguity: String? {
        if let byte = text.utf8.first(where: { $0 < 0x20 || $0 == 0x7F }) {
            return "a control character (0x\(String(byte, radix: 16, uppercase: true))) in the source"
        }
        guard !isPlainPath else { return nil }
        guard let scheme, Self.isScheme(scheme) else { return "not a URL: the scheme is not valid" }
        let afterScheme = text.utf8.dropFirst(scheme.utf8.count + 1)
        if scheme == "file" {
            // No host is ever connected to; the path is what both readers take.
            guard afterScheme.first == UInt8(ascii: "/") else {
                return "a file URL must be followed by a path (file:///...)"
            }
            guard afterScheme.starts(with: "//".utf8) else { return nil }
            let fileAuthority = authority ?? ""
            return fileAuthority.isEmpty || fileAuthority.lowercased() == "localhost"
                ? nil : "a file URL names a host (\(fileAuthority)); write file:///path"
        }
        guard afterScheme.starts(with: "//".utf8), let authority else {
            return "the scheme must be followed by //"
        }
        if text.utf8.contains(UInt8(ascii: " ")) { return "a space in a URL (write it as %20)" }
        if authority.contains("\\") { return "a backslash in the URL's host part" }
        if let userInfo, userInfo.contains("@") { return "an @ in the user information (write it as %40)" }
        return Self.hostProblem(
            authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority)
    }

    /// The host without port or user information, lower-cased (an IPv6 literal keeps its
    /// brackets): what a host allow-list is matched against. Nil where `hostAndPort` is.
    public var host: String? {
        hostAndPort.map { Self.split($0[...]).host.lowercased() }
    }

    /// The port written in the authority, if any.
    public var port: Int? {
        hostAndPort.flatMap { Self.split($0[...]).port }.flatMap { Int($0) }
    }

    /// What is wrong with "host[:port]", or nil.
    private static func hostProblem(_ hostAndPort: Substring) -> String? {
        let (host, port) = split(hostAndPort)
        if let port, !(port.allSatisfy(\.isASCIIDigit) && (port.isEmpty || (Int(port).map { $0 <= 65535 } ?? false))) {
            return "the port is not a number from 0 to 65535"
        }
        guard !host.isEmpty else { return "the URL has no host" }
        if host.hasPrefix("[") {
            let inside = host.dropFirst().dropLast()
            guard host.hasSuffix("]"), !inside.isEmpty, inside.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." })
            else {
                return "the IPv6 address is not plain hex digits and colons in brackets"
            }
            return nil
        }
        guard host.utf8.allSatisfy({ $0.isASCIILetter || $0.isASCIIDigit || "-._~".utf8.contains($0) }) else {
            return host.utf8.contains(where: { $0 >= 0x80 })
                ? "the host is not ASCII (write an international name in punycode, xn--...)"
                : "the host has characters a host name cannot have"
        }
        // libcurl reads "127.1", "0x7f.1" and "017.0.0.1" as IPv4 addresses, as inet_aton does;
        // a name whose last label starts with a digit is accepted only as a plain dotted quad.
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        if let last = labels.last(where: { !$0.isEmpty }), last.first?.isASCIIDigit == true {
            let quad =
                labels.count == 4
                && labels.allSatisfy { label in
                    !label.isEmpty && label.count <= 3 && label.allSatisfy(\.isASCIIDigit)
                        && (label == "0" || !label.hasPrefix("0")) && Int(label)! <= 255
                }
            if !quad { return "the host looks like a number but is not a plain IPv4 address (a.b.c.d)" }
        }
        return nil
    }

    /// "host:port", "[v6]:port" or "host" split at the port's colon; the port may be empty.
    private static func split(_ hostAndPort: Substring) -> (host: Substring, port: Substring?) {
        let hostEnd =
            hostAndPort.hasPrefix("[")
            ? hostAndPort.firstIndex(of: "]").map(hostAndPort.index(after:)) ?? hostAndPort.endIndex
            : hostAndPort.firstIndex(of: ":") ?? hostAndPort.endIndex
        let rest = hostAndPort[hostEnd...]
        guard rest.first == ":" else {
            return (rest.isEmpty ? hostAndPort : hostAndPort[..<hostEnd], rest.isEmpty ? nil : rest)
        }
        return (hostAndPort[..<hostEnd], rest.dropFirst())
    }

    /// Whether `scheme` is ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), RFC 3986 section 3.1.
    public static func isScheme(_ scheme: String) -> Bool {
        guard let first = scheme.utf8.first, first.isASCIILetter else { return false }
        return scheme.utf8.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || "+-.".utf8.contains($0) }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension UInt8 {
    fileprivate var isASCIILetter: Bool { (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
    fileprivate var isASCIIDigit: Bool { (0x30...0x39).contains(self) }
}
