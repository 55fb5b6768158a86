import Crypto

/// How a Subsonic server checks a request's auth, written from the API documentation
/// independently of the plugin, so the tests check the plugin against the protocol.
public enum SubsonicAuthCheck {
    /// The query's parameters by name (the last value wins).
    public static func parameters(_ query: String) -> [String: String] {
        var result: [String: String] = [:]
        for item in query.split(separator: "&") {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            result[String(pair[0])] = pair.count > 1 ? String(pair[1]) : ""
        }
        return result
    }

    public static func valid(query: String, user: String, password: String) -> Bool {
        let p = parameters(query)
        guard p["u"] == user, p["v"] != nil, p["c"] != nil else { return false }
        if let token = p["t"], let salt = p["s"] {
            let digest = Insecure.MD5.hash(data: Array((password + salt).utf8))
            return token == digest.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
        }
        if let plain = p["p"], plain.hasPrefix("enc:") {
            let hex = Array(password.utf8).map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
            return plain.dropFirst(4).lowercased() == hex
        }
        return false
    }
}
