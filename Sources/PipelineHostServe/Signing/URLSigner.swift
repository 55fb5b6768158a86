import Crypto

/// Signs and checks image paths the way imgproxy does: the signature is base64url of
/// HMAC-SHA256(key, salt + "/" + the path after the signature segment). Several key/salt pairs
/// may be configured so keys can be rotated: a path signed with any of them is accepted, and
/// new paths are signed with the first.
public struct URLSigner: Sendable {
    /// One key and its salt, both given as hex.
    public struct KeyPair: Sendable {
        let key: SymmetricKey
        let salt: [UInt8]
    }

    /// Why keys could not be read.
    public struct KeyError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    let pairs: [KeyPair]

    /// The signature's length in characters: base64url of 32 bytes, unpadded.
    static let signatureLength = 43

    /// The shortest key accepted by default: HMAC-SHA256's own block of security, 32 bytes.
    public static let minimumKeyBytes = 32

    /// Key/salt pairs from comma-separated hex lists of equal length, as in PIPELINEHOST_KEY and
    /// PIPELINEHOST_SALT. An empty or absent key list gives a signer with no keys. A key shorter
    /// than `minimumKeyBytes` is refused (a guessable key signs for anyone); only published test
    /// vectors have a reason to lower it.
    public init(keys: String?, salts: String?, minimumKeyBytes: Int = URLSigner.minimumKeyBytes) throws(KeyError) {
        let keyList = Self.split(keys), saltList = Self.split(salts)
        guard keyList.count == saltList.count else {
            throw KeyError(
                description:
                    "PIPELINEHOST_KEY has \(keyList.count) key(s) but PIPELINEHOST_SALT has \(saltList.count) salt(s); give one salt per key"
            )
        }
        var pairs: [KeyPair] = []
        for (index, (key, salt)) in zip(keyList, saltList).enumerated() {
            guard let keyBytes = [UInt8](hex: key), !keyBytes.isEmpty else {
                throw KeyError(description: "PIPELINEHOST_KEY entry \(index + 1) is not hex")
            }
            guard keyBytes.count >= minimumKeyBytes else {
                throw KeyError(
                    description: "PIPELINEHOST_KEY entry \(index + 1) is \(keyBytes.count) bytes; a key needs at least "
                        + "\(minimumKeyBytes) random bytes: make one with `openssl rand -hex 32`")
            }
            guard Set(keyBytes).count >= min(8, keyBytes.count / 2) else {
                throw KeyError(
                    description: "PIPELINEHOST_KEY entry \(index + 1) repeats a few byte values (all zero, or typed): "
                        + "it is no random key; make one with `openssl rand -hex 32`")
            }
            guard let saltBytes = [UInt8](hex: salt), !saltBytes.isEmpty else {
                throw KeyError(
                    description: "PIPELINEHOST_SALT entry \(index + 1) is \(salt.isEmpty ? "empty" : "not hex"); "
                        + "give each key a salt, such as `openssl rand -hex 16`")
            }
            pairs.append(KeyPair(key: SymmetricKey(data: keyBytes), salt: saltBytes))
        }
        self.pairs = pairs
    }

    /// Whether any key is configured.
    public var hasKeys: Bool { !pairs.isEmpty }

    /// The signature for `path` (everything after the signature segment, starting with "/"),
    /// made with the first key; nil when there is none.
    public func signature(for path: String) -> String? {
        guard let pair = pairs.first else { return nil }
        let code = HMAC<SHA256>.authenticationCode(for: pair.salt + Array(path.utf8), using: pair.key)
        return Base64URL.encode(code)
    }

    /// Whether `signature` is right for `path` under any configured key. The comparison is
    /// swift-crypto's, in constant time; a signature of the wrong length is refused before it,
    /// and so is any spelling but the canonical one: the last of the 43 characters carries 2
    /// unused bits, and 4 spellings of one signature would be 4 keys for one image in a CDN.
    public func accepts(_ signature: Substring, for path: Substring) -> Bool {
        guard signature.utf8.count == Self.signatureLength, let code = Base64URL.decode(signature),
            Base64URL.encode(code).utf8.elementsEqual(signature.utf8)
        else { return false }
        let message = Array(path.utf8)
        return pairs.contains {
            HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: $0.salt + message, using: $0.key)
        }
    }

    private static func split(_ list: String?) -> [Substring] {
        guard let list, !list.isEmpty else { return [] }
        return list.split(separator: ",", omittingEmptySubsequences: false).map { $0.drop { $0 == " " } }
    }
}
