import Crypto
import PipelineHost

/// Adds Subsonic authentication to one transfer's URL. Auth parameters already in the URL are
/// replaced, so a URL copied from a browser still gets exactly one fresh signature.
struct SubsonicSigner: TransferSigner, CustomStringConvertible {
    enum Method: String, ParameterChoice { case token, plain }

    let user: String
    let password: String
    let method: Method
    let version: String
    let client: String

    func sign(_ location: String) throws(PipelineError) -> String {
        sign(location, salt: Self.freshSalt())
    }

    func sign(_ location: String, salt: String) -> String {
        let (base, query) = Self.split(location)
        var items = query.filter { item in
            let name = item.split(separator: "=", maxSplits: 1).first.map(String.init) ?? item
            return !SubsonicAuthPlugin.parameterNames.contains(name)
        }
        items.append("u=" + Self.percentEncoded(user))
        switch method {
        case .token:
            items.append("t=" + Self.md5Hex(password + salt))
            items.append("s=" + salt)
        case .plain:
            items.append("p=enc:" + Self.hex(Array(password.utf8)))
        }
        items.append("v=" + Self.percentEncoded(version))
        items.append("c=" + Self.percentEncoded(client))
        return base + "?" + items.joined(separator: "&")
    }

    /// Never the password, should a signer ever be printed.
    var description: String { "SubsonicSigner(user: \(user), password: REDACTED)" }

    /// 16 random hex digits from the system's secure generator.
    static func freshSalt() -> String {
        var generator = SystemRandomNumberGenerator()
        return hex((0..<8).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    static func md5Hex(_ text: String) -> String {
        hex(Array(Insecure.MD5.hash(data: Array(text.utf8))))
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.hexDigits }

    /// Splits "http://h/p?a=1&b=2#f" into ("http://h/p", ["a=1", "b=2"]); the fragment goes.
    private static func split(_ location: String) -> (String, [String]) {
        let parts = SourceLocation(location)
        return (String(parts.resource), parts.queryItems.map(String.init))
    }

    /// RFC 3986 unreserved characters stay; everything else is %XX.
    private static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + hex([byte]).uppercased()
            }
        }
        return out
    }
}
