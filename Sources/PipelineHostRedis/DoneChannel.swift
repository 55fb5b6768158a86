import CRedis
import Foundation
import Glibc
import PipelineHost

/// Wakes the nodes waiting for an entry as soon as its leader is done: the leader publishes the
/// entry's digest on `pipelinehost:v1:done`, and each waiting node's subscriber (one connection
/// on a thread of its own, started at the first wait) wakes its waiters for that digest. Pub/sub
/// can drop messages, so a waiter also looks on its own after the poll interval.
///
/// In a Redis Cluster, a `PUBLISH` to any node reaches the subscribers of every node (the cluster
/// bus carries it), so the subscriber may use any node: it takes the first that answers of the
/// known masters and the seeds, and moves to the next when its node fails. Sharded pub/sub would
/// carry each message only within its shard, but a subscriber would then need one connection per
/// shard, and to follow every failover; the digests are small, so the broadcast costs little.
final class DoneChannel: Sendable {
    static let name = "pipelinehost:v1:done"
    /// Where the subscriber may connect, in order of preference, asked at each (re)connect.
    private let nodes: @Sendable () -> [RedisAddress]
    private let waiters = Locked<(next: Int, byDigest: [String: [Int: CheckedContinuation<Void, Never>]])>((0, [:]))
    private let state = Locked<(started: Bool, stopped: Bool)>((false, false))
    /// Messages received, for tests and stats.
    private let received = Locked(0)
    /// Whether the subscriber is subscribed now, for tests that must not publish before it is.
    private let subscribed = Locked(false)
    /// Gets the text after `PurgeMessage.prefix` of each purge message, which it reads.
    private let purgeHandler = Locked<(@Sendable (Substring) -> Void)?>(nil)
    /// This node's id, which its purge messages carry.
    let nodeID = String(UInt64.random(in: 1...UInt64.max), radix: 16)

    var messagesReceived: Int { received.withLock { $0 } }
    var isSubscribed: Bool { subscribed.withLock { $0 } }
    /// Waiters now, over every digest.
    var waiterCount: Int { waiters.withLock { $0.byDigest.values.reduce(0) { $0 + $1.count } } }

    init(nodes: @escaping @Sendable () -> [RedisAddress]) { self.nodes = nodes }

    /// The channel of `client`'s Redis, or of any node of its cluster.
    convenience init(client: RedisClient) {
        self.init { [client] in client.address.isCluster ? client.clusterNodes.map(client.address.at) : [client.address]
        }
    }

    /// Returns when `digest`'s leader publishes, or after `timeout`.
    func wait(for digest: String, upTo timeout: Duration) async {
        startIfNeeded()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let id = waiters.withLock { waiters in
                waiters.next += 1
                waiters.byDigest[digest, default: [:]][waiters.next] = continuation
                return waiters.next
            }
            Task {
                try? await Task.sleep(for: timeout)
                self.resume(digest, id)
            }
        }
    }

    /// Hands every purge message to `handler`, from now on: the subscriber starts at once.
    func onPurge(_ handler: @escaping @Sendable (Substring) -> Void) {
        purgeHandler.withLock { $0 = handler }
        startIfNeeded()
    }

    /// Stops the subscriber (within its read timeout).
    func stop() { state.withLock { $0.stopped = true } }

    private func resume(_ digest: String, _ id: Int) {
        let continuation = waiters.withLock { waiters -> CheckedContinuation<Void, Never>? in
            let found = waiters.byDigest[digest]?.removeValue(forKey: id)
            if waiters.byDigest[digest]?.isEmpty == true { waiters.byDigest[digest] = nil }
            return found
        }
        continuation?.resume()
    }

    private func wake(_ digest: String) {
        let woken = waiters.withLock { $0.byDigest.removeValue(forKey: digest) } ?? [:]
        for continuation in woken.values { continuation.resume() }
    }

    private func startIfNeeded() {
        let start = state.withLock { state -> Bool in
            guard !state.started else { return false }
            state.started = true
            return true
        }
        guard start else { return }
        let thread = Thread { [self] in listen() }
        thread.name = "pipelinehost.redis.done"
        thread.start()
    }

    /// The subscriber's loop: (re)connect, subscribe, and hand each message to `wake`.
    private func listen() {
        var error = [CChar](repeating: 0, count: 256)
        var connection: OpaquePointer?
        var attempt = 0
        defer { if let connection { ph_redis_free(connection) } }
        while !state.withLock({ $0.stopped }) {
            guard let open = connection else {
                let candidates = nodes()
                let address = candidates[attempt % max(1, candidates.count)]
                attempt += 1
                let made = ph_redis_connect(
                    address.host, Int32(address.port), Int32(address.database), 200,
                    address.user, address.password, nil, &error, error.count)
                if let made, ph_redis_subscribe(made, Self.name, &error, error.count) == 0 {
                    connection = made
                    attempt = 0
                    subscribed.withLock { $0 = true }
                } else {
                    if let made { ph_redis_free(made) }
                    // Every node tried once: wait before the next round.
                    if attempt % max(1, candidates.count) == 0 { usleep(500_000) }
                }
                continue
            }
            var payload = ph_redis_reply()
            switch ph_redis_next_message(open, 250, &payload, &error, error.count) {
            case 1:
                let digest = String(
                    decoding: UnsafeBufferPointer(start: payload.data, count: payload.length), as: UTF8.self)
                ph_redis_reply_free(&payload)
                received.withLock { $0 += 1 }
                if digest.hasPrefix(PurgeMessage.prefix) {
                    purgeHandler.withLock { $0 }?(digest.dropFirst(PurgeMessage.prefix.count))
                } else {
                    wake(digest)
                }
            case 0:
                break
            default:
                subscribed.withLock { $0 = false }
                ph_redis_free(open)
                connection = nil
            }
        }
    }
}
