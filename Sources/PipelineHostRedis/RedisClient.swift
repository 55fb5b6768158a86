import CRedis
import Dispatch
import PipelineHost

/// A small pool of blocking hiredis connections per node. Every call has a short timeout and runs
/// on the client's own queues, never on Swift's cooperative pool; a failed connection is dropped
/// (with the node's other idle ones) and a new one made on the next call. A circuit breaker stops
/// calling a Redis that keeps failing; in a cluster each node has its own, so a dead master
/// stops only its own slots' calls. For a Redis Cluster, each command goes to the master of
/// its key's slot (`RedisClient+Cluster`).
public final class RedisClient: Sendable {
    /// What one command answered.
    public enum Reply: Sendable, Equatable {
        case string([UInt8])
        case integer(Int)
        case null
        case status(String)
        case error(String)
        case array(count: Int)
    }

    /// A call that did not reach Redis or got no answer in time.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
        /// The breaker refused the call: nothing was sent.
        public var breakerOpen = false
        /// Redis answered, and refused the user and password (or asked for some): a
        /// configuration error, not a passing failure.
        public var credentialsRefused = false
    }

    public let address: RedisAddress
    let timeoutMilliseconds: Int
    let maxIdle: Int
    private let idle = Locked<[RedisNode: [Connection]]>([:])
    /// A cluster's slot map, and when to learn it again.
    let topology = Locked(TopologyState())
    /// One Redis' breaker; for a cluster, the pattern of each node's (`nodeBreakers`).
    let breaker: CircuitBreaker
    private let nodeBreakers = Locked<[RedisNode: CircuitBreaker]>([:])
    /// Serial queues of its own, one per connection it keeps: Dispatch gives serial queues a
    /// thread even when its pool is busy with image work, so a cache call never waits behind
    /// a decode (with the shared pool it did, for seconds, on two busy cores).
    private let queues: [DispatchQueue]
    private let nextQueue = Locked(0)

    /// How long the connect and each call may take when nothing says otherwise (`--shared-timeout`):
    /// a shared cache slower than that costs a miss, not a request's time.
    public static let defaultTimeout: Duration = .milliseconds(50)

    /// A client for `address`; `timeout` bounds the connect and each call.
    public init(
        address: RedisAddress, timeout: Duration = RedisClient.defaultTimeout, maxIdle: Int = 8,
        breaker: CircuitBreaker = CircuitBreaker()
    ) {
        self.address = address
        timeoutMilliseconds = max(1, timeout.wholeMilliseconds)
        self.maxIdle = maxIdle
        self.breaker = breaker
        queues = (0..<max(1, maxIdle)).map { DispatchQueue(label: "pipelinehost.redis.\($0)") }
    }

    deinit {
        for connection in idle.withLock({ $0.values.joined() }) { ph_redis_free(connection.pointer) }
    }

    /// Why this client's credentials cannot work, or nil: Redis answered and refused the user
    /// and password, or asked for a password it was not given. An unreachable Redis is nil: that
    /// is a passing failure, which the breaker and the local tiers handle. For a start-up check.
    public func credentialProblem() async -> String? {
        switch await onOwnQueue({ self.blockingCommand([Array("PING".utf8)], on: self.address.node) }) {
        case .failure(let failure) where failure.credentialsRefused:
            return
                "Redis at \(address) refused the credentials: \(failure.description.split(separator: ":").last.map { $0.trimmingPrefix(" ") } ?? "")"
        case .success(.error(let message)) where message.hasPrefix("NOAUTH"):
            return "Redis at \(address) asks for a password: set PIPELINEHOST_REDIS_PASSWORD"
        default:
            return nil
        }
    }

    /// Runs one command (binary-safe arguments). Throws `Failure` when Redis cannot be reached in
    /// time or the breaker is open; a Redis error reply is a `.error` reply, not a throw.
    public func command(_ arguments: [[UInt8]]) async throws(Failure) -> Reply {
        let result = await onOwnQueue {
            self.address.isCluster
                ? self.blockingClusterCommand(arguments) : self.guarded(arguments, on: self.address.node)
        }
        switch result {
        case .success(.error(let text)) where Self.isPassing(text):
            throw Failure(description: "\(address): \(text)")
        case .success(let reply):
            return reply
        case .failure(let failure):
            throw failure
        }
    }

    /// Error replies that say Redis cannot answer for now (a cluster without a master for the
    /// slot, a failover, a restart loading its data): failures for the breaker, not answers.
    static func isPassing(_ error: String) -> Bool {
        ["CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "LOADING"].contains { error.hasPrefix($0) }
    }

    /// A command of text arguments.
    public func command(_ arguments: String...) async throws(Failure) -> Reply {
        try await command(arguments.map { Array($0.utf8) })
    }

    /// Runs `work` on the next of the client's queues. The result is handed over under a lock,
    /// which ThreadSanitizer can see (as BlockingExecutor does).
    private func onOwnQueue<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        let queue = queues[
            nextQueue.withLock { index in
                defer { index = (index + 1) % queues.count }
                return index
            }]
        let handoff = Locked<T?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                let value = work()
                handoff.withLock { $0 = value }
                continuation.resume()
            }
        }
        return handoff.withLock { $0! }
    }

    /// The breaker of `node`: the client's own for one Redis, else the node's.
    func breaker(of node: RedisNode) -> CircuitBreaker {
        guard address.isCluster else { return breaker }
        return nodeBreakers.withLock { breakers in
            if let known = breakers[node] { return known }
            let made = breaker.sibling()
            breakers[node] = made
            return made
        }
    }

    /// How many times a breaker has opened (for a cluster, over every node's).
    public var breakerOpenings: Int {
        address.isCluster ? nodeBreakers.withLock { $0.values.reduce(0) { $0 + $1.timesOpened } } : breaker.timesOpened
    }

    /// Runs one command on `node` behind its breaker: nothing is sent while it is open, and a
    /// failure, or an answer that Redis cannot answer for now, counts against it.
    func guarded(_ arguments: [[UInt8]], on node: RedisNode, asking: Bool = false) -> Result<Reply, Failure> {
        let breaker = breaker(of: node)
        guard breaker.allowsCall() else {
            return .failure(
                Failure(description: "circuit open: \(address.at(node)) failed repeatedly", breakerOpen: true))
        }
        let result = blockingCommand(arguments, on: node, asking: asking)
        switch result {
        case .success(.error(let text)) where Self.isPassing(text): breaker.failed()
        case .success: breaker.succeeded()
        case .failure: breaker.failed()
        }
        return result
    }

    /// Runs one command on `node` (after `ASKING` on the same connection, when `asking`).
    func blockingCommand(_ arguments: [[UInt8]], on node: RedisNode, asking: Bool = false) -> Result<Reply, Failure> {
        var error = [CChar](repeating: 0, count: 256)
        let connection: Connection
        switch self.connection(to: node) {
        case .success(let made): connection = made
        case .failure(let failure): return .failure(failure)
        }
        if asking {
            var reply = ph_redis_reply()
            let status = Self.withArgv([Array("ASKING".utf8)]) {
                ph_redis_command(connection.pointer, 1, $0, $1, &reply, &error, error.count)
            }
            ph_redis_reply_free(&reply)
            guard status == 0 else { return .failure(dropped(connection, node, error)) }
        }
        var reply = ph_redis_reply()
        let status = Self.withArgv(arguments) { argv, lengths in
            ph_redis_command(connection.pointer, Int32(arguments.count), argv, lengths, &reply, &error, error.count)
        }
        guard status == 0 else { return .failure(dropped(connection, node, error)) }
        defer { ph_redis_reply_free(&reply) }
        keep(connection, node)
        let bytes = reply.data.map { Array(UnsafeBufferPointer(start: $0, count: reply.length)) } ?? []
        switch reply.kind {
        case PH_REDIS_STRING: return .success(.string(bytes))
        case PH_REDIS_INTEGER: return .success(.integer(Int(reply.integer)))
        case PH_REDIS_STATUS: return .success(.status(String(decoding: bytes, as: UTF8.self)))
        case PH_REDIS_ERROR: return .success(.error(String(decoding: bytes, as: UTF8.self)))
        case PH_REDIS_ARRAY: return .success(.array(count: Int(reply.integer)))
        default: return .success(.null)
        }
    }

    /// An idle connection to `node`, or a new one.
    func connection(to node: RedisNode) -> Result<Connection, Failure> {
        if let reused = idle.withLock({ $0[node]?.popLast() }) { return .success(reused) }
        var error = [CChar](repeating: 0, count: 256)
        var refused: Int32 = 0
        let target = address.at(node)
        guard
            let made = ph_redis_connect(
                target.host, Int32(target.port), Int32(target.database), Int32(timeoutMilliseconds),
                target.user, target.password, &refused, &error, error.count)
        else {
            return .failure(
                Failure(
                    description: "cannot connect to \(target): \(Self.text(error))", credentialsRefused: refused != 0))
        }
        return .success(Connection(pointer: made))
    }

    /// Puts a connection that worked back for the next call, if there is room.
    func keep(_ connection: Connection, _ node: RedisNode) {
        let kept = idle.withLock { pools in
            guard pools[node, default: []].count < maxIdle else { return false }
            pools[node, default: []].append(connection)
            return true
        }
        if !kept { ph_redis_free(connection.pointer) }
    }

    /// A connection that failed, freed with the node's idle ones (a node that died leaves them
    /// all broken); the failure says why.
    func dropped(_ connection: Connection, _ node: RedisNode, _ error: [CChar]) -> Failure {
        ph_redis_free(connection.pointer)
        for stale in idle.withLock({ $0.removeValue(forKey: node) ?? [] }) { ph_redis_free(stale.pointer) }
        return Failure(description: "\(address.at(node)): \(Self.text(error))")
    }

    static func withArgv<T>(
        _ arguments: [[UInt8]], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> T
    ) -> T {
        let copies = arguments.map { bytes -> UnsafeMutablePointer<CChar> in
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, bytes.count))
            bytes.withUnsafeBufferPointer { source in
                source.withMemoryRebound(to: CChar.self) { copy.update(from: $0.baseAddress!, count: bytes.count) }
            }
            return copy
        }
        defer { for copy in copies { copy.deallocate() } }
        var argv = copies.map { UnsafePointer<CChar>?(UnsafePointer($0)) }
        let lengths = arguments.map(\.count)
        return argv.withUnsafeMutableBufferPointer { argvBuffer in
            lengths.withUnsafeBufferPointer { body(argvBuffer.baseAddress!, $0.baseAddress!) }
        }
    }

    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A hiredis connection; only one thread holds it at a time (popped from the idle list).
    struct Connection: @unchecked Sendable {
        let pointer: OpaquePointer
    }
}
