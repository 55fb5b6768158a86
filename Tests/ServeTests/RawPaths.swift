import PipelineHostServe
import TestSupport

/// Image paths signed as written, parts `ServePath` refuses to make included (a profile name
/// with "%2F", an empty option value, a derived chain's name): what a client holding the key
/// could send, to test what serve does with it.
enum RawPath {
    static func signed(profile: String, source: String, options: [(String, String)] = [], signer: URLSigner) -> String {
        let unsigned = "/" + profile + options.map { "/\($0.0):\($0.1)" }.joined() + "/" + base64url(source)
        return "/" + signer.signature(for: unsigned)! + unsigned
    }
}
