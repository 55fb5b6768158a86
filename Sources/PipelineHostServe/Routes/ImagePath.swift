import PipelineHost

/// An image URL in imgproxy's shape, taken apart:
///
///     /{signature}/{profile}/{base64url(source)}
///     /{signature}/{profile}/plain/{percent-encoded source}
///     /{signature}/{profile}/w:600/q:60/{base64url(source)}
///
/// The profile names a preset of the profile file; option segments (`name:value`, in any
/// order) choose among the values its `params` allows, and nothing else comes from the URL.
struct ImagePath: Sendable, Equatable {
    /// One `name:value` segment, as written.
    struct Option: Sendable, Equatable {
        let name: Substring
        let value: Substring
    }

    /// The first segment: a signature, or "unsafe".
    let signature: Substring
    /// What the signature covers: the path after the signature segment, from its "/".
    let signed: Substring
    /// The profile segment, as written.
    let profile: String
    /// The source, decoded.
    let source: String
    /// The option segments, in the order written.
    let options: [Option]

    /// Why a path is not an image URL.
    enum Problem: Error, Equatable {
        /// Not the shape of an image URL at all.
        case notAnImagePath
        /// The right shape, but the source segment does not decode.
        case badSource(String)
        /// An option segment that is not `name:value`.
        case badOption(String)
    }

    /// The signature segment and what it signs, from a request's raw path (percent-encoding
    /// intact, no query); nil when the path has no second segment.
    static func split(_ path: Substring) -> (signature: Substring, signed: Substring)? {
        guard path.first == "/", let slash = path.dropFirst().firstIndex(of: "/") else { return nil }
        let signature = path[path.index(after: path.startIndex)..<slash]
        return signature.isEmpty ? nil : (signature, path[slash...])
    }

    /// The profile and the source from the signed part of a path.
    init(signature: Substring, signed: Substring) throws(Problem) {
        self.signature = signature
        self.signed = signed
        let rest = signed.dropFirst()
        guard let profileEnd = rest.firstIndex(of: "/") else { throw .notAnImagePath }
        profile = String(rest[..<profileEnd])
        var encoded = rest[rest.index(after: profileEnd)...]
        // Option segments hold a ":", which neither base64url nor "plain" does.
        var options: [Option] = []
        while let slash = encoded.firstIndex(of: "/"), let colon = encoded[..<slash].firstIndex(of: ":") {
            let name = encoded[..<colon], value = encoded[encoded.index(after: colon)..<slash]
            guard !name.isEmpty, !value.isEmpty, !value.contains(":") else {
                throw .badOption(
                    "option segment \"\(Redactor.escapingControls(String(encoded[..<slash].prefix(80))))\" is not name:value"
                )
            }
            options.append(Option(name: name, value: value))
            encoded = encoded[encoded.index(after: slash)...]
        }
        self.options = options
        guard !profile.isEmpty, !encoded.isEmpty else { throw .notAnImagePath }
        if encoded.hasPrefix("plain/") {
            let plain = encoded.dropFirst("plain/".count)
            guard let decoded = plain.percentDecoded, !decoded.isEmpty else {
                throw .badSource("the plain source is not valid percent-encoded UTF-8")
            }
            source = decoded
        } else {
            // imgproxy lets a long base64 source be split with "/"; the pieces join back. An
            // empty piece ("w:100//SRC", "a//b") would be a second spelling of one path.
            let pieces = encoded.split(separator: "/", omittingEmptySubsequences: false)
            guard !pieces.contains(where: \.isEmpty) else {
                throw .badSource("the source segment has an empty piece (\"//\")")
            }
            let joined = pieces.joined()
            guard let bytes = Base64URL.decode(Substring(joined)), !bytes.isEmpty,
                let text = String(validating: bytes, as: UTF8.self)
            else {
                throw .badSource("the source segment is not base64url of a UTF-8 URL")
            }
            source = text
        }
    }

    /// Parses a whole raw path.
    init(parsing path: Substring) throws(Problem) {
        guard let (signature, signed) = Self.split(path) else { throw .notAnImagePath }
        try self.init(signature: signature, signed: signed)
    }
}
