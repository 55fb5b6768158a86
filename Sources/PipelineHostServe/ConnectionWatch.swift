import NIOCore
import PipelineHost

/// Cancels the requests in progress on a connection when it closes. One close callback per
/// connection, not per request: a keep-alive connection serves thousands of requests, and a
/// callback per request on its closeFuture would keep every finished request (and its image)
/// alive until the connection closed.
final class ConnectionWatch: Sendable {
    private struct State {
        var closed = false
        var next = 0
        var cancels: [Int: @Sendable () -> Void] = [:]
    }

    private let state = Locked(State())
    private static let open = Locked<[ObjectIdentifier: ConnectionWatch]>([:])

    /// The watch of `channel`, made (and hooked to its close) on first use.
    static func of(_ channel: any Channel) -> ConnectionWatch {
        let id = ObjectIdentifier(channel)
        let (watch, isNew) = open.withLock { watches in
            if let existing = watches[id] { return (existing, false) }
            let made = ConnectionWatch()
            watches[id] = made
            return (made, true)
        }
        if isNew {
            channel.closeFuture.whenComplete { _ in
                _ = open.withLock { $0.removeValue(forKey: id) }
                watch.close()
            }
        }
        return watch
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
