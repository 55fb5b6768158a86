import PipelineHost

/// A purge as it crosses the done channel, written and read as values, with no I/O.
///
/// The body is the sender's node id, the time it was sent (milliseconds since 1970) and the
/// source digests, comma-separated: `node:ms:d1,d2`. With a shared secret the body travels
/// sealed as stored values are (`EntrySeal`, for the channel's own key) and hex-encoded, so a
/// node drops any message not sealed with the secret, and one sent more than `maxAge` ago or
/// ahead (a replay). Without a secret anyone who can publish on the Redis can purge, as anyone
/// who can write to it can change its values: docs/SCALING.md says to set one.
enum PurgeMessage {
    /// Messages start with it; done messages (a digest) never do.
    static let prefix = "purge:"
    /// The most digests one message carries: a purge of more sources is sent as several.
    static let maxDigests = 500
    /// How old (or how far ahead, for clocks apart) a sealed message may be.
    static let maxAge: Double = 60
    /// The longest message text read: `maxDigests` digests, sealed and hex-encoded, with room.
    static let maxLength = 2 * (64 + maxDigests * 65) + 256
    /// What the seal authenticates the body for: never a value's key.
    static let sealContext = "pipelinehost:v1:purge"

    /// What a node makes of one message.
    enum Reading: Equatable {
        /// Purge these digests here.
        case purge(Set<String>)
        /// This node's own message: its purge is done.
        case own
        /// Not a purge to act on, and why (counted, never acted on).
        case dropped(String)
    }

    /// The messages that announce a purge of `digests` by `node` at `now` (seconds since 1970).
    static func write(digests: Set<String>, node: String, now: Double, seal: EntrySeal?) -> [String] {
        let sorted = digests.sorted()
        return stride(from: 0, to: sorted.count, by: maxDigests).map { start in
            let chunk = sorted[start..<min(start + maxDigests, sorted.count)]
            let body = "\(node):\(Int64(now * 1000)):" + chunk.joined(separator: ",")
            return prefix + (seal.map { $0.seal(Array(body.utf8), key: sealContext).hexDigits } ?? body)
        }
    }

    /// What the text after `prefix` asks of `node` at `now`, with this node's `seal`.
    static func read(_ text: Substring, node: String, now: Double, seal: EntrySeal?) -> Reading {
        guard text.utf8.count <= maxLength else { return .dropped("over \(maxLength) bytes") }
        let body: String
        if let seal {
            guard let sealed = [UInt8](hex: text), let opened = seal.open(sealed, key: sealContext),
                let plain = String(validating: opened, as: UTF8.self)
            else { return .dropped("not sealed with the shared secret") }
            body = plain
        } else {
            body = String(text)
        }
        let parts = body.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let sent = Int64(parts[1]) else { return .dropped("malformed") }
        if parts[0] == node { return .own }
        if seal != nil, abs(now - Double(sent) / 1000) > maxAge { return .dropped("sent over \(Int(maxAge)) s ago") }
        let digests = parts[2].split(separator: ",", omittingEmptySubsequences: false)
        guard digests.count <= maxDigests else { return .dropped("over \(maxDigests) sources") }
        guard !digests.isEmpty, digests.allSatisfy({ $0.count == 64 && $0.allSatisfy(\.isHexDigit) }) else {
            return .dropped("malformed")
        }
        return .purge(Set(digests.map(String.init)))
    }
}
