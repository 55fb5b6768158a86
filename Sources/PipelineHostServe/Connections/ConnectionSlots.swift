import HummingbirdCore
import PipelineHost

/// Open connections, `--max-connections` of them for anything and a few more kept spare for the
/// operational endpoints: when clients hold every slot (slow readers, a flood), `/health`,
/// `/ready` and `/metrics` still answer on a spare one, and anything else asked on it is 503
/// `connections_full` (`SpareConnectionMiddleware`). Past the spare ones, connections wait in
/// the kernel's backlog.
final class ConnectionSlots: Sendable {
    let limit: Int
    /// 4 to 64: a sixty-fourth of the limit.
    let spare: Int
    private let open = Locked(0)

    init(limit: Int) {
        self.limit = max(1, limit)
        spare = max(4, min(64, limit / 64))
    }

    /// Whether the connections open now (the caller's own among them) pass the limit: the
    /// caller's is a spare one.
    var isOverLimit: Bool { open.withLock { $0 > limit } }

    /// What Hummingbird asks before it accepts a connection.
    var delegate: Delegate { Delegate(slots: self) }

    struct Delegate: AvailableConnectionsDelegate {
        let slots: ConnectionSlots
        mutating func connectionOpened() { slots.open.withLock { $0 += 1 } }
        mutating func connectionClosed() { slots.open.withLock { $0 -= 1 } }
        func isAcceptingNewConnections() -> Bool { slots.open.withLock { $0 < slots.limit + slots.spare } }
    }
}
