/// Signed image paths, as `pipelinehost sign` prints them and clients build them.
public enum ServePath {
    /// The path for `profile` and `source`, with option segments `name:value` for `options`
    /// (in the order given), signed with the signer's first key; nil without a key.
    public static func signed(profile: String, source: String, plain: Bool = false, options: [(String, String)] = [],
                              signer: URLSigner) -> String? {
        let unsigned = path(profile: profile, source: source, plain: plain, options: options)
        return signer.signature(for: unsigned).map { "/" + $0 + unsigned }
    }

    /// The path with "unsafe" for a signature, for serve --allow-unsigned.
    public static func unsafe(profile: String, source: String, plain: Bool = false, options: [(String, String)] = []) -> String {
        "/unsafe" + path(profile: profile, source: source, plain: plain, options: options)
    }

    /// What the signature covers: "/{profile}/{options...}/{base64url source}" or ".../plain/{escaped}".
    static func path(profile: String, source: String, plain: Bool, options: [(String, String)] = []) -> String {
        let segments = options.map { "/\($0.0):\($0.1)" }.joined()
        return plain ? "/\(profile)\(segments)/plain/\(percentEncoded(source))" : "/\(profile)\(segments)/\(Base64URL.encode(source.utf8))"
    }

    /// Everything but unreserved characters escaped, so the source is one opaque segment.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }
}
