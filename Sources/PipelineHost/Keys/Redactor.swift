/// Hides credentials in a URL before it reaches any log line, result line or file, and escapes
/// control characters so a source cannot drive the terminal it is printed on.
public enum Redactor {
    /// Query parameters that are secrets by exact name (Subsonic's token, salt and password).
    public static let sensitiveNames: Set<String> = ["t", "s", "p"]

    /// A query parameter whose name contains one of these, compared case-insensitively with '-'
    /// and '_' alike, is a secret: `X-Goog-Signature`, `auth_token`, `access-token`, `apiKey`,
    /// `sessionid`, `jwt`. A harmless name that contains one (`keyword`) is hidden too; that
    /// costs a little readability and never a secret.
    public static let sensitiveFragments = [
        "token", "key", "sig", "signature", "secret", "password", "passwd", "auth", "credential", "session", "jwt",
    ]

    /// What stands in for every hidden credential.
    public static let mask = "REDACTED"

    /// Whether a query parameter called `name` (as written, percent-encoded or not) is a secret.
    /// `extraNames` are a profile's own (normalize's drop_query and redact_query).
    public static func isSensitive(_ name: Substring, extraNames: Set<String> = []) -> Bool {
        let plain = folded(name.removingPercentEncodingLossy)
        if sensitiveNames.contains(plain) || extraNames.contains(where: { folded($0) == plain }) { return true }
        return sensitiveFragments.contains { plain.contains($0) }
    }

    /// `location` with any user information (`user:password@`, or a bare `token@`) replaced by
    /// the mask, the value of every sensitive query or fragment parameter replaced by the mask,
    /// and control characters escaped. With `allValues`, every parameter value is masked: what
    /// cache files store, so no credential reaches them whatever a profile's normalize does.
    public static func redact(_ location: String, extraNames: Set<String> = [], allValues: Bool = false) -> String {
        let parts = SourceLocation(location)
        let hide = { (name: Substring) in allValues || isSensitive(name, extraNames: extraNames) }
        var result = String(parts.resource)
        if let authority = parts.authority {
            let redactedPath = redactPathParameters(parts.resource[authority.endIndex...], hiding: hide)
            let userInfoMasked = parts.userInfo.map {
                String(parts.resource[..<$0.startIndex]) + mask + parts.resource[$0.endIndex..<authority.endIndex]
            }
            result = (userInfoMasked ?? String(parts.resource[..<authority.endIndex])) + redactedPath
        }
        if let query = parts.query { result += "?" + redactParameters(query, hiding: hide) }
        if let fragment = parts.fragment { result += "#" + redactParameters(fragment, hiding: hide) }
        return escapingControls(result)
    }

    /// A URL path with the values of sensitive path parameters (`;jsessionid=...` in a
    /// segment) masked, and control characters escaped: for a path that is not a source, such
    /// as a request line that did not parse.
    public static func redactingPathParameters(_ path: Substring) -> String {
        escapingControls(redactPathParameters(path) { isSensitive($0) })
    }

    private static func redactPathParameters(_ path: Substring, hiding hide: (Substring) -> Bool) -> String {
        guard path.contains(";") else { return String(path) }
        return path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            guard let semicolon = segment.firstIndex(of: ";") else { return String(segment) }
            return segment[...semicolon]
                + redactParameters(segment[segment.index(after: semicolon)...], separator: ";", hiding: hide)
        }.joined(separator: "/")
    }

    /// `text` with C0 and C1 control characters and DEL written as `\xNN`, so a line printed
    /// to a terminal stays one line and carries no escape sequence. With `keepingLines`, line
    /// feeds and tabs stay: for messages of several lines the program wrote itself.
    public static func escapingControls(_ text: String, keepingLines: Bool = false) -> String {
        let escaped = { (scalar: Unicode.Scalar) in
            isControl(scalar) && !(keepingLines && (scalar == "\n" || scalar == "\t"))
        }
        guard text.unicodeScalars.contains(where: escaped) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if escaped(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\x" + (hex.count < 2 ? "0" + hex : hex)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Lower case, with '-' read as '_'.
    private static func folded(_ name: some StringProtocol) -> String {
        String(name.lowercased().map { $0 == "-" ? "_" : $0 })
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private static func redactParameters(
        _ parameters: Substring, separator: Character = "&",
        hiding hide: (Substring) -> Bool
    ) -> String {
        parameters.split(separator: separator, omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            return hide(pair[..<equals]) ? "\(pair[..<equals])=\(mask)" : String(pair)
        }.joined(separator: String(separator))
    }

}

extension Substring {
    /// Percent-decoding for comparison only; malformed escapes are left as they are. Redaction
    /// and normalize's host both use it.
    package var removingPercentEncodingLossy: String {
        guard contains("%") else { return String(self) }
        var bytes: [UInt8] = []
        var index = startIndex
        while index < endIndex {
            let c = self[index]
            if c == "%", let hi = self.index(index, offsetBy: 1, limitedBy: endIndex), hi < endIndex,
                let lo = self.index(hi, offsetBy: 1, limitedBy: endIndex), lo < endIndex,
                let value = UInt8(String(self[hi...lo]), radix: 16)
            {
                bytes.append(value)
                index = self.index(after: lo)
            } else {
                bytes.append(contentsOf: Array(String(c).utf8))
                index = self.index(after: index)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
