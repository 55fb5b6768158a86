import PipelineHost

/// Signed image paths, as `pipelinehost sign` prints them and clients build them. A path is
/// made only from parts held to serve's grammar (`ProfileGrammar`), and only when serve's own
/// parser reads it back as exactly those parts: whoever chooses a profile name, an option or a
/// source cannot make a signature for another path.
public enum ServePath {
    /// Why a path was not made: a part outside serve's grammar, or a path serve would read
    /// otherwise.
    public struct Refusal: Error, CustomStringConvertible, Sendable {
        /// The part refused and why.
        public let description: String
    }

    /// The path for `profile` and `source`, with option segments `name:value` for `options`
    /// (in the order given), signed with the signer's first key; nil without a key.
    public static func signed(
        profile: String, source: String, plain: Bool = false, options: [(String, String)] = [],
        signer: URLSigner
    ) throws(Refusal) -> String? {
        let unsigned = try checked(profile: profile, source: source, plain: plain, options: options)
        return signer.signature(for: unsigned).map { "/" + $0 + unsigned }
    }

    /// The path with "unsafe" for a signature, for serve --allow-unsigned.
    public static func unsafe(
        profile: String, source: String, plain: Bool = false,
        options: [(String, String)] = []
    ) throws(Refusal) -> String {
        "/unsafe" + (try checked(profile: profile, source: source, plain: plain, options: options))
    }

    /// What a signature covers, from checked parts, after serve's parser read it back the same.
    static func checked(profile: String, source: String, plain: Bool, options: [(String, String)]) throws(Refusal)
        -> String
    {
        if let problem = ProfileGrammar.profileNameProblem(profile) {
            throw Refusal(description: "profile name \"\(Redactor.escapingControls(profile))\" \(problem)")
        }
        for (name, value) in options {
            if let problem = ProfileGrammar.optionNameProblem(name) {
                throw Refusal(description: "option name \"\(Redactor.escapingControls(name))\" \(problem)")
            }
            if let problem = ProfileGrammar.optionSpellingProblem(value) {
                throw Refusal(description: "option \(name): value \"\(Redactor.escapingControls(value))\": \(problem)")
            }
        }
        let unsigned = path(profile: profile, source: source, plain: plain, options: options)
        let read = try? ImagePath(signature: "unsafe", signed: Substring(unsigned))
        guard let read, read.profile == profile, read.source == source,
            read.options.map({ (String($0.name), String($0.value)) }).elementsEqual(options, by: ==)
        else {
            throw Refusal(
                description: source.isEmpty
                    ? "the source is empty" : "serve would not read this path as the profile, options and source given")
        }
        return unsigned
    }

    /// What the signature covers: "/{profile}/{options...}/{base64url source}" or ".../plain/{escaped}".
    static func path(profile: String, source: String, plain: Bool, options: [(String, String)] = []) -> String {
        let segments = options.map { "/\($0.0):\($0.1)" }.joined()
        return plain
            ? "/\(profile)\(segments)/plain/\(percentEncoded(source))"
            : "/\(profile)\(segments)/\(Base64URL.encode(source.utf8))"
    }

    /// Everything but unreserved characters escaped, so the source is one opaque segment.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
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
