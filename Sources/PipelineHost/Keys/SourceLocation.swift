/// A source string split into the parts of a URL, by one set of rules for every reader:
/// redaction, normalize, the per-host queue, fetch, signers and output names.
///
/// The split is lexical and never fails: the fragment starts at the first "#", the query at the
/// first "?" before it, the authority after the first "://" up to the next "/", and user
/// information runs to the authority's last "@". Nothing is decoded or normalized (the normalize
/// stage builds its key from these parts), so `resource`, `query` and `fragment` put back
/// together with "?" and "#" give `text` again.
public struct SourceLocation: Sendable, Hashable {
    /// The source string as given.
    public let text: String
    /// Everything before the query and the fragment: scheme, authority and path.
    public let resource: Substring
    /// After "?", without it; nil when there is no "?".
    public let query: Substring?
    /// After "#", without it; nil when there is no "#".
    public let fragment: Substring?
    /// After "://" up to the path, user information included; nil without "://".
    public let authority: Substring?

    /// Splits `text`; never fails.
    public init(_ text: String) {
        self.text = text
        var rest = Substring(text)
        if let hash = rest.firstIndex(of: "#") {
            fragment = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        } else {
            fragment = nil
        }
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        } else {
            query = nil
        }
        resource = rest
        if let separator = rest.firstRange(of: "://") {
            let start = separator.upperBound
            authority = rest[start..<(rest[start...].firstIndex(of: "/") ?? rest.endIndex)]
        } else {
            authority = nil
        }
    }

    /// A filesystem path rather than a URL: no "://" anywhere and no "file:" scheme.
    public var isPlainPath: Bool { !text.contains("://") && !text.hasPrefix("file:") }

    /// The scheme, lower-cased, for a URL: what comes before the first ":".
    public var scheme: String? {
        guard !isPlainPath, let colon = text.firstIndex(of: ":") else { return nil }
        return text[..<colon].lowercased()
    }

    /// The authority's user information (before its last "@"), when there is any.
    public var userInfo: Substring? {
        guard let authority, let at = authority.lastIndex(of: "@") else { return nil }
        return authority[..<at]
    }

    /// The authority without user information, lower-cased: host and port, as the per-host
    /// queue counts them. Nil without an authority or for file URLs.
    public var hostAndPort: String? {
        guard !text.hasPrefix("file:"), let authority else { return nil }
        let host = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        return host.isEmpty ? nil : host.lowercased()
    }

    /// The query split at "&", empty items left out, each as written.
    public var queryItems: [Substring] {
        query.map { $0.split(separator: "&") } ?? []
    }
}
