import CRedis
import Dispatch
import PipelineHost

/// A small pool of blocking hiredis connections. Every call has a short timeout and runs on the
/// client's own queues, never on Swift's cooperative pool; a failed connection is dropped and a new one
/// made on the next call. A circuit breaker stops calling a Redis that keeps failing.
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
    private let idle = Locked<[Connection]>([])
    let breaker: CircuitBreaker
    /// Serial queues of its own, one per connection it keeps: Dispatch gives serial queues a
    /// thread even when its pool is busy with image work, so a cache call never waits behind
    /// a decode (with the shared pool it did, for seconds, on two busy cores).
    private let queues: [DispatchQueue]
    private let nextQueue = Locked(0)

    /// A client for `address`; `timeout` bounds the connect and each call.
    public init(address: RedisAddress, timeout: Duration = .milliseconds(50), maxIdle: Int = 8,
                breaker: CircuitBreaker = CircuitBreaker()) {
        self.address = address
        let parts = timeout.components
        timeoutMilliseconds = max(1, Int(parts.seconds) * 1000 + Int(parts.attoseconds / 1_000_000_000_000_000))
        self.maxIdle = maxIdle
        self.breaker = breaker
        queues = (0..<max(1, maxIdle)).map { DispatchQueue(label: "pipelinehost.redis.\($0)") }
    }

    deinit {
        for connection in idle.withLock({ $0 }) { ph_redis_free(connection.pointer) }
    }

    /// Why this client's credentials cannot work, or nil: Redis answered and refused the user
    /// and password, or asked for a password it was not given. An unreachable Redis is nil: that
    /// is a passing failure, which the breaker and the local tiers handle. For a start-up check.
    public func credentialProblem() async -> String? {
        switch await onOwnQueue({ self.blockingCommand([Array("PING".utf8)]) }) {
        case .failure(let failure) where failure.credentialsRefused:
            return "Redis at \(address) refused the credentials: \(failure.description.split(separator: ":").last.map { $0.trimmingPrefix(" ") } ?? "")"
        case .success(.error(let message)) where message.hasPrefix("NOAUTH"):
            return "Redis at \(address) asks for a password: set PIPELINEHOST_REDIS_PASSWORD"
        default:
            return nil
        }
    }

    /// Runs one command (binary-safe arguments). Throws `Failure` when Redis cannot be reached in
    /// time or the breaker is open; a Redis error reply is a `.error` reply, not a throw.
    public func command(_ arguments: [[UInt8]]) async throws(Failure) -> Reply {
        guard breaker.allowsCall() else { throw Failure(description: "circuit open: Redis failed repeatedly", breakerOpen: true) }
        let result = await onOwnQueue { self.blockingCommand(arguments) }
        switch result {
        case .success(let reply):
            breaker.succeeded()
            return reply
        case .failure(let failure):
            breaker.failed()
            throw failure
        }
    }

    /// A command of text arguments.
    public func command(_ arguments: String...) async throws(Failure) -> Reply {
        try await command(arguments.map { Array($0.utf8) })
    }

    /// Runs `work` on the next of the client's queues. The result is handed over under a lock,
    /// which ThreadSanitizer can see (as BlockingExecutor does).
    private func onOwnQueue<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        let queue = queues[nextQueue.withLock { index in
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

    private func blockingCommand(_ arguments: [[UInt8]]) -> Result<Reply, Failure> {
        var error = [CChar](repeating: 0, count: 256)
        let connection: Connection
        if let reused = idle.withLock({ $0.popLast() }) {
            connection = reused
        } else {
            var refused: Int32 = 0
            guard let made = ph_redis_connect(address.host, Int32(address.port), Int32(address.database),
                                              Int32(timeoutMilliseconds), address.user, address.password, &refused, &error, error.count) else {
                return .failure(Failure(description: "cannot connect to \(address): \(Self.text(error))", credentialsRefused: refused != 0))
            }
            connection = Connection(pointer: made)
        }
        var reply = ph_redis_reply()
        let status = Self.withArgv(arguments) { argv, lengths in
            ph_redis_command(connection.pointer, Int32(arguments.count), argv, lengths, &reply, &error, error.count)
        }
        guard status == 0 else {
            ph_redis_free(connection.pointer)
            return .failure(Failure(description: "\(address): \(Self.text(error))"))
        }
        defer { ph_redis_reply_free(&reply) }
        let kept = idle.withLock { connections in
            guard connections.count < maxIdle else { return false }
            connections.append(connection)
            return true
        }
        if !kept { ph_redis_free(connection.pointer) }
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

    private static func withArgv<T>(_ arguments: [[UInt8]], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> T) -> T {
        let copies = arguments.map { bytes -> UnsafeMutablePointer<CChar> in
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, bytes.count))
            bytes.withUnsafeBufferPointer { source in
                source.withMemoryRebound(to: CChar.self) { copy.update(from: $0.baseAddress!, count: bytes.count) }
            }
            return copy
        }
        defer { copies.forEach { $0.deallocate() } }
        var argv = copies.map { UnsafePointer<CChar>?(UnsafePointer($0)) }
        let lengths = arguments.map(\.count)
        return argv.withUnsafeMutableBufferPointer { argvBuffer in
            lengths.withUnsafeBufferPointer { body(argvBuffer.baseAddress!, $0.baseAddress!) }
        }
    }

    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A hiredis connection; only one thread holds it at a time (popped from the idle list).
    struct Connection: @unchecked Sendable {
        let pointer: OpaquePointer
    }
}

/// Opens after `threshold` failures in a row: calls fail at once for `cooldown`, then one call
/// is let through, and a success closes it again. So a Redis that is down costs one timeout per
/// cooldown, not one per request.
public final class CircuitBreaker: Sendable {
    private let state: Locked<BreakerState>

    /// A breaker that opens after `threshold` failures in a row, for `cooldown`.
    public init(threshold: Int = 5, cooldown: Duration = .seconds(1)) {
        state = Locked(BreakerState(threshold: threshold, cooldown: cooldown))
    }

    /// How many times it has opened.
    public var timesOpened: Int { state.withLock { $0.timesOpened } }
    /// Whether calls fail at once now (or one probe is let through).
    public var isOpen: Bool { state.withLock { $0.isOpen } }

    func allowsCall() -> Bool { state.withLock { $0.allowsCall(at: .now) } }
    func succeeded() { state.withLock { $0.succeeded() } }
    func failed() { state.withLock { $0.failed(at: .now) } }
}

/// The circuit breaker's decisions as a value, given the time: tested without sleeping.
public struct BreakerState: Sendable, Equatable {
    /// Failures in a row that open it.
    public let threshold: Int
    /// How long it stays open before one probe is let through.
    public let cooldown: Duration
    private var failures = 0
    private var openUntil: ContinuousClock.Instant?
    private var probing = false
    /// How many times it has opened.
    public private(set) var timesOpened = 0

    /// A closed breaker.
    public init(threshold: Int, cooldown: Duration) {
        self.threshold = threshold
        self.cooldown = cooldown
    }

    /// Whether it is open (calls fail at once until the cooldown ends, then one probe).
    public var isOpen: Bool { openUntil != nil }

    /// Whether a call may go out at `now`: always when closed; when open, one probe once the
    /// cooldown has passed, and no other call until that probe succeeds or fails.
    public mutating func allowsCall(at now: ContinuousClock.Instant) -> Bool {
        guard let until = openUntil else { return true }
        guard now >= until, !probing else { return false }
        probing = true
        return true
    }

    /// A call succeeded: closed again.
    public mutating func succeeded() {
        failures = 0
        openUntil = nil
        probing = false
    }

    /// A call failed at `now`: the threshold-th failure in a row opens it (a failed probe opens
    /// it again) until `now + cooldown`.
    public mutating func failed(at now: ContinuousClock.Instant) {
        failures += 1
        probing = false
        if failures >= threshold {
            if openUntil == nil { timesOpened += 1 }
            openUntil = now + cooldown
        }
    }
}
