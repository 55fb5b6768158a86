import PipelineHost

/// Signed purge paths, `/purge/{signature}/{base64url source}`, as `pipelinehost sign --purge`
/// prints them and serve's POST reads them. The signature covers "purge:/" and the encoded
/// source: an image path's message always starts with "/", so no image signature is a purge
/// signature, and no purge signature fetches an image (not even of a profile named "purge").
public enum PurgePath {
    static let prefix = "/purge/"

    /// What the signature covers.
    static func message(_ encoded: Substring) -> String { "purge:/" + encoded }

    /// The signed path for `source`, with the signer's first key; nil without a key.
    public static func signed(source: String, signer: URLSigner) throws(ServePath.Refusal) -> String? {
        let encoded = Base64URL.encode(source.utf8)
        guard read(encoded: Substring(encoded)) == source else {
            throw ServePath.Refusal(
                description: source.isEmpty
                    ? "the source is empty" : "the source holds control characters or is over 8 KB")
        }
        return signer.signature(for: message(Substring(encoded))).map { prefix + $0 + "/" + encoded }
    }

    /// The signature and the source of a raw request path, when it has this shape; the source
    /// decoded (and held to what `signed` makes).
    static func parse(_ path: Substring) -> (signature: Substring, encoded: Substring, source: String)? {
        guard path.hasPrefix(prefix) else { return nil }
        let parts = path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let source = read(encoded: parts[1]) else { return nil }
        return (parts[0], parts[1], source)
    }

    /// The source base64url-encoded in `encoded`: UTF-8, 1 to 8192 bytes, no control characters.
    static func read(encoded: Substring) -> String? {
        guard let bytes = Base64URL.decode(encoded), (1...8192).contains(bytes.count),
            !bytes.contains(where: { $0 < 0x20 || $0 == 0x7f }),
            let text = String(validating: bytes, as: UTF8.self)
        else { return nil }
        return text
    }
}
