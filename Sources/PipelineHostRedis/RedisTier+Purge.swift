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

    /// Deletes every stored value of the purged sources, then gives up this node's leases of
    /// them (`HeldLeases`), whose work began before the purge: a waiter anywhere wakes, finds no
    /// entry, and leads anew.
    public func purge(_ purge: SourcePurge) async throws(PipelineError) -> Int {
        let removed = await deleteIndexed(purge)
        for (token, keys) in held.revoke(purge) { await release(keys, token: token) }
        return try removed.get()
    }

    /// Deletes every value in the purged sources' indexes; returns how many.
    private func deleteIndexed(_ purge: SourcePurge) async -> Result<Int, PipelineError> {
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
            return .failure(failed(error))
        }
        return .success(removed)
    }

    /// Publishes the purge on the done channel (`PurgeMessage`: sealed with the shared secret,
    /// in messages of at most 500 sources).
    public func announce(_ purge: SourcePurge) async throws(PipelineError) {
        let messages = PurgeMessage.write(digests: purge.digests, node: done.nodeID, now: clock.now, seal: seal)
        do throws(RedisClient.Failure) {
            for message in messages { _ = try await client.command("PUBLISH", DoneChannel.name, message) }
        } catch {
            throw failed(error)
        }
    }

    private func failed(_ error: RedisClient.Failure) -> PipelineError {
        counters.error(error)
        return PipelineError(.transport, "Redis: \(error.description)")
    }

    /// Hands each purge another node announces to `handler`, one at a time; a message that is
    /// not sealed with the shared secret (when there is one), too old, malformed or over 500
    /// sources, and one that finds 16 purges already waiting, is dropped and counted
    /// (`pipelinehost_purge_messages_dropped_total`), never acted on.
    public func onAnnouncedPurge(_ handler: @escaping @Sendable (SourcePurge) async -> Void) {
        let (node, clock, seal) = (done.nodeID, clock, seal)
        done.onPurge { [weak self] text in
            guard let self else { return }
            switch PurgeMessage.read(text, node: node, now: clock.now, seal: seal) {
            case .own: return
            case .dropped(let why): dropped(why)
            case .purge(let digests):
                if !announced.enqueue(SourcePurge(digests: digests), to: handler) { dropped("16 purges already wait") }
            }
        }
    }

    /// A purge message not acted on: counted, and logged the first time and every 1000th.
    private func dropped(_ why: String) {
        counters.add(\.purgeMessagesDropped)
        let count = counters.stats.purgeMessagesDropped
        if count == 1 || count.isMultiple(of: 1000) {
            logger.warning(
                "a purge message on the done channel was dropped: \(why)", metadata: ["dropped": "\(count)"])
        }
    }
}

/// Purges other nodes announced, run one at a time with at most `limit` waiting, the waiting
/// ones merged into one: a burst of messages costs a bounded queue, never a task (and a thread
/// of disk work) each.
final class AnnouncedPurges: Sendable {
    static let limit = 16
    private let state = Locked<(running: Bool, waiting: [SourcePurge])>((false, []))

    /// Queues `purge` for `handler`; false when `limit` purges already wait.
    func enqueue(_ purge: SourcePurge, to handler: @escaping @Sendable (SourcePurge) async -> Void) -> Bool {
        let start: Bool? = state.withLock { state in
            guard state.waiting.count < Self.limit else { return nil }
            state.waiting.append(purge)
            defer { state.running = true }
            return !state.running
        }
        guard let start else { return false }
        if start { Task { await self.drain(handler) } }
        return true
    }

    private func drain(_ handler: @Sendable (SourcePurge) async -> Void) async {
        while let next = state.withLock({ state -> SourcePurge? in
            guard !state.waiting.isEmpty else {
                state.running = false
                return nil
            }
            defer { state.waiting = [] }
            return SourcePurge(digests: state.waiting.reduce(into: Set<String>()) { $0.formUnion($1.digests) })
        }) {
            await handler(next)
        }
    }
}
