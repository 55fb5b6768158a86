import CRedis

/// A Redis Cluster client in the way of the cluster spec's "smart client": it learns the slot map
/// from `CLUSTER SLOTS` (asking the masters it knows, then the seeds), sends each command to the
/// master of its key's slot, follows `MOVED` (and learns the map again) and `ASK` (with
/// `ASKING`), and learns the map again after a failed call, which is how it finds a replica
/// promoted by a failover without a restart. Calls without a key go to any master.
extension RedisClient {
    /// The map as last learnt; nil for one Redis, or before the first call.
    public var slotMap: SlotMap? { topology.withLock { $0.map } }
    /// How many times the map was learnt.
    public var mapRefreshes: Int { topology.withLock { $0.refreshes } }

    /// Every node a subscriber may use: the known masters, then the seeds.
    var clusterNodes: [RedisNode] {
        var seen = Set<RedisNode>()
        return ((slotMap?.masters ?? []) + address.clusterSeeds).filter { seen.insert($0).inserted }
    }

    func blockingClusterCommand(_ arguments: [[UInt8]]) -> Result<Reply, Failure> {
        if topology.withLock({ $0.shouldRefresh(at: .now) }) { learnMap() }
        let slot = Self.keyPosition(arguments).map { KeySlot.of(arguments[$0]) }
        var node = slot.flatMap { slot in topology.withLock { $0.map?.owner(of: slot) } } ?? clusterNodes[0]
        var asking = false
        // A slot being migrated can answer ASK and then MOVED; more than that is a loop.
        for _ in 0..<4 {
            let result = guarded(arguments, on: node, asking: asking)
            switch result {
            case .success(.error(let text)):
                guard let redirection = Redirection(text, asked: node) else {
                    if Self.isPassing(text) { topology.withLock { $0.markStale() } }
                    return result
                }
                switch redirection {
                case .moved(let slot, let to):
                    topology.withLock { $0.moved(slot, to: to) }
                    (node, asking) = (to, false)
                case .ask(_, let to):
                    (node, asking) = (to, true)
                }
            case .failure(let failure):
                // The node may be gone, its slots soon another's: learn the map at the next call
                // (while its breaker is open, nothing was sent, and the map is as good as it was).
                if !failure.breakerOpen { topology.withLock { $0.markStale() } }
                return result
            case .success:
                return result
            }
        }
        return .failure(Failure(description: "\(address): too many redirections"))
    }

    /// Asks the known masters, then the seeds, for the slot map; the first answer wins. Nodes
    /// whose breaker is open are asked last. Nobody answering leaves the old map (the call then
    /// fails on its own, behind the breaker).
    private func learnMap() {
        var error = [CChar](repeating: 0, count: 256)
        var ranges = [ph_redis_slot_range](repeating: ph_redis_slot_range(), count: 1024)
        let nodes = clusterNodes
        for node in nodes.filter({ !breaker(of: $0).isOpen }) + nodes.filter({ breaker(of: $0).isOpen }) {
            guard case .success(let connection) = connection(to: node) else { continue }
            let count = ph_redis_cluster_slots(connection.pointer, &ranges, Int32(ranges.count), &error, error.count)
            guard count >= 0 else {
                if count == -1 { _ = dropped(connection, node, error) } else { keep(connection, node) }
                continue
            }
            keep(connection, node)
            let map = SlotMap(
                ranges.prefix(Int(count)).map { range in
                    var range = range
                    let host = withUnsafeBytes(of: &range.host) {
                        String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                    }
                    return (
                        Int(range.start)...Int(range.end),
                        RedisNode(host: host.isEmpty ? node.host : host, port: Int(range.port))
                    )
                })
            guard !map.ranges.isEmpty else { continue }
            topology.withLock { $0.learnt(map) }
            return
        }
    }

    /// Where a command's key is, for routing: none for commands that have no key (those go to
    /// any master). `PUBLISH` reaches every node of a cluster wherever it is sent; it is routed
    /// by its message, an entry's digest, so each shard carries its own entries' messages.
    static func keyPosition(_ arguments: [[UInt8]]) -> Int? {
        guard let first = arguments.first else { return nil }
        switch String(decoding: first, as: UTF8.self).uppercased() {
        case "EVAL", "EVALSHA":
            return arguments.count > 3 && String(decoding: arguments[2], as: UTF8.self) != "0" ? 3 : nil
        case "PUBLISH":
            return arguments.count > 2 ? 2 : nil
        case "PING", "INFO", "DBSIZE", "SCAN", "CLUSTER", "FLUSHALL", "FLUSHDB":
            return nil
        default:
            return arguments.count > 1 ? 1 : nil
        }
    }
}
