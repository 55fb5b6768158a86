import Crypto

/// Proof that a value in a shared tier (Redis, the object store) was written by a node that knows the shared secret
/// (`PIPELINEHOST_SHARED_SECRET`): HMAC-SHA256 over the Redis key and the value, in front of the
/// value. Without it, anyone who can write to Redis decides what every node serves: the entry's
/// own SHA-256 only catches damage, since a forger writes a matching one. With it, a value that
/// is not sealed, or sealed for another key, is corrupt: counted, and the work runs.
public struct EntrySeal: Sendable {
    private let key: SymmetricKey

    /// At least 32 bytes of secret: a shorter one is refused, so a guessable word never becomes one.
    public static let minimumBytes = 32

    /// A seal with `secret`; nil when it is shorter than `minimumBytes`.
    public init?(secret: [UInt8]) {
        guard secret.count >= Self.minimumBytes else { return nil }
        key = SymmetricKey(data: secret)
    }

    static let magic = Array("PHSEAL1\n".utf8)

    /// The value as stored: the magic, the MAC, the value.
    public func seal(_ value: [UInt8], key redisKey: String) -> [UInt8] {
        Self.magic + Array(mac(value[...], key: redisKey)) + value
    }

    /// The value, when it is sealed for `redisKey` with this secret; nil otherwise.
    public func open(_ stored: [UInt8], key redisKey: String) -> [UInt8]? {
        let headerLength = Self.magic.count + SHA256.byteCount
        guard stored.count >= headerLength, stored.starts(with: Self.magic) else { return nil }
        let value = stored[headerLength...]
        let claimed = stored[Self.magic.count..<headerLength]
        // Constant time: HMAC's own check.
        guard
            HMAC<SHA256>.isValidAuthenticationCode(
                Array(claimed), authenticating: message(value, key: redisKey), using: key)
        else {
            return nil
        }
        return Array(value)
    }

    private func mac(_ value: ArraySlice<UInt8>, key redisKey: String) -> HashedAuthenticationCode<SHA256> {
        HMAC<SHA256>.authenticationCode(for: message(value, key: redisKey), using: key)
    }

    /// The key's length, the key, the value: no two (key, value) pairs give one message.
    private func message(_ value: ArraySlice<UInt8>, key redisKey: String) -> [UInt8] {
        let keyBytes = Array(redisKey.utf8)
        let length = UInt32(keyBytes.count)
        return [UInt8(length >> 24), UInt8(length >> 16 & 255), UInt8(length >> 8 & 255), UInt8(length & 255)]
            + keyBytes + value
    }
}
