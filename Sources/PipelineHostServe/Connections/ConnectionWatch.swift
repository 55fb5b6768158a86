import NIOCore
import PipelineHost

/// Cancels the requests in progress on a connection when it closes. One per connection, made by
/// the connection's own handling (`TimedHTTP1Channel.handle`) and reached by its requests as a
/// task-local, so nothing outlives the connection and no table is shared between connections.
/// One close callback per connection, not per request: a keep-alive connection serves thousands
/// of requests, and a callback per request on its closeFuture would keep every finished request
/// (and its image) alive until the connection closed.
final class ConnectionWatch: Sendable {
    private struct State {
        var closed = false
        var next = 0
        var cancels: [Int: @Sendable () -> Void] = [:]
    }

    private let state = Locked(State())

    /// The watch of the connection the current request came on; nil outside a connection (the
    /// router's test client).
    @TaskLocal static var current: ConnectionWatch?

    /// Whether the connection is a spare one, kept for the operational endpoints
    /// (`ConnectionSlots`).
    let isSpare: Bool

    /// A watch that closes when `channel` does.
    init(closingWith channel: any Channel, isSpare: Bool = false) {
        self.isSpare = isSpare
        channel.closeFuture.whenComplete { [self] _ in close() }
    }

    /// Runs `cancel` when the connection closes before `untrack`; at once if it has closed.
    func track(_ cancel: @escaping @Sendable () -> Void) -> Int {
        let id: Int? = state.withLock { state in
            guard !state.closed else { return nil }
            state.next += 1
            state.cancels[state.next] = cancel
            return state.next
        }
        guard let id else {
            cancel()
            return -1
        }
        return id
    }

    func untrack(_ id: Int) {
        _ = state.withLock { $0.cancels.removeValue(forKey: id) }
    }

    private func close() {
        let cancels = state.withLock { state in
            state.closed = true
            defer { state.cancels = [:] }
            return Array(state.cancels.values)
        }
        for cancel in cancels { cancel() }
    }
}
