import PipelineHost

/// Purge in Redis: each stored value's key is also added to its source's index (a set under
/// `pipelinehost:v1:src:{<source digest>}`), which a purge pops member by member (`SPOP`, so two
/// nodes purging at once never both delete, and a Redis Cluster routes each key to its shard).
/// The purge is announced on the done channel, so every node drops its memory and disk copies.
extension RedisTier: PurgeableTier {
    /// The index of a source's values.
    static func sourceIndexKey(_ digest: String) -> String { "pipelinehost:v1:src:{\(digest)}" }

    /// Adds a value's key to its source's index and makes the index live at least as long as
    /// the value: one round trip, and no `PEXPIRE GT` (Redis 7 only).
    static let addToIndex = """
        redis.call('SADD', KEYS[1], ARGV[1])
        if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
        return 1
        """

    public func purge(_ purge: SourcePurge) async throws(PipelineError) -> Int {
        var removed = 0
        do throws(RedisClient.Failure) {
            for digest in purge.digests.sorted() {
                let index = Self.sourceIndexKey(digest)
                // Bounded: an index holds one member per stored variant of one source.
                for _ in 0..<100_000 {
                    guard case .string(let member) = try await client.command([Array("SPOP".utf8), Array(index.utf8)])
                    else { break }
                    if case .integer(let count) = try await client.command([Array("DEL".utf8), member]) {
                        removed += count
                    }
                }
            }
        } catch {
            throw failed(error)
        }
        return removed
    }

    /// Publishes the purge on the done channel: "purge:", this node's id, the digests.
    public func announce(_ purge: SourcePurge) async throws(PipelineError) {
        let message = DoneChannel.purgePrefix + done.nodeID + ":" + purge.digests.sorted().joined(separator: ",")
        do throws(RedisClient.Failure) {
            _ = try await client.command("PUBLISH", DoneChannel.name, message)
        } catch {
            throw failed(error)
        }
    }

    private func failed(_ error: RedisClient.Failure) -> PipelineError {
        counters.error(error)
        return PipelineError(.transport, "Redis: \(error.description)")
    }

    public func onAnnouncedPurge(_ handler: @escaping @Sendable (SourcePurge) async -> Void) {
        done.onPurge { text in
            let digests = text.split(separator: ",").map(String.init).filter { digest in
                digest.count == 64 && digest.allSatisfy(\.isHexDigit)
            }
            guard !digests.isEmpty else { return }
            Task { await handler(SourcePurge(digests: Set(digests))) }
        }
    }
}
