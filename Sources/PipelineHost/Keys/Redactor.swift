/// Hides credentials in a URL before it reaches any log line, result line or file.
public enum Redactor {
    /// Query parameters treated as secrets everywhere, whatever the profile says.
    public static let sensitiveNames: Set<String> = [
        "t", "s", "p", "token", "access_token", "refresh_token", "auth", "key", "apikey", "api_key",
        "sig", "signature", "password", "passwd", "secret", "client_secret",
        "x-amz-signature", "x-amz-credential", "x-amz-security-token",
    ]

    public static let mask = "REDACTED"

    /// `location` with the password of any user:password@ part and the value of every sensitive
    /// or listed query parameter replaced by `mask`.
    public static func redact(_ location: String, extraNames: Set<String> = []) -> String {
        var text = Substring(location)
        var fragment = ""
        if let hash = text.firstIndex(of: "#") {
            fragment = String(text[hash...])
            text = text[..<hash]
        }
        var head = text
        var query: Substring?
        if let mark = text.firstIndex(of: "?") {
            head = text[..<mark]
            query = text[text.index(after: mark)...]
        }
        var result = redactUserInfo(String(head))
        if let query {
            let names = sensitiveNames.union(extraNames.map { $0.lowercased() })
            let parts = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
                guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
                let name = pair[..<equals].removingPercentEncodingLossy.lowercased()
                return names.contains(name) ? "\(pair[..<equals])=\(mask)" : String(pair)
            }
            result += "?" + parts.joined(separator: "&")
        }
        return result + fragment
    }

    private static func redactUserInfo(_ head: String) -> String {
        guard let scheme = head.firstRange(of: "://") else { return head }
        let authorityStart = scheme.upperBound
        let authorityEnd = head[authorityStart...].firstIndex(of: "/") ?? head.endIndex
        let authority = head[authorityStart..<authorityEnd]
        guard let at = authority.lastIndex(of: "@") else { return head }
        let userInfo = authority[..<at]
        let user = userInfo.split(separator: ":", maxSplits: 1).first ?? ""
        return String(head[..<authorityStart]) + user + ":" + mask + String(head[at...])
    }
}

extension Substring {
    /// Percent-decoding for comparison only; malformed escapes are left as they are.
    var removingPercentEncodingLossy: String {
        guard contains("%") else { return String(self) }
        var bytes: [UInt8] = []
        var index = startIndex
        while index < endIndex {
            let c = self[index]
            if c == "%", let hi = self.index(index, offsetBy: 1, limitedBy: endIndex), hi < endIndex,
               let lo = self.index(hi, offsetBy: 1, limitedBy: endIndex), lo < endIndex,
               let value = UInt8(String(self[hi...lo]), radix: 16) {
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
