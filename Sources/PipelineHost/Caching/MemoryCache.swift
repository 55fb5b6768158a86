/// A strict least-recently-used cache with a cost limit (bytes) and a count limit. An entry
/// costs its own bytes plus its key's (`keyCost`): keys can be long (a 60 KB URL), and a limit
/// that counted images alone would let many small entries with long keys grow without bound.
///
/// Owned by one isolation domain (the `Pipeline` actor keeps its own), so it needs no lock and a
/// hit is a dictionary lookup plus relinking one node. Expired entries stay until they are
/// pushed out: the caller decides whether a stale entry is still worth serving.
public final class MemoryCache<Key: Hashable> {
    /// How much a `MemoryCache` may hold.
    public struct Limits: Sendable {
        /// The most bytes the entries may take.
        public var cost: Int
        /// The most entries it may hold.
        public var count: Int
        /// Limits of `cost` bytes and `count` entries.
        public init(cost: Int = 128 << 20, count: Int = 2_000) {
            self.cost = max(0, cost)
            self.count = max(0, count)
        }
    }

    private final class Node {
        let key: Key
        var entry: CacheEntry
        /// The entry's cost and its key's, as counted in `totalCost`.
        let cost: Int
        var newer: Node?
        weak var older: Node?
        init(key: Key, entry: CacheEntry, cost: Int) {
            self.key = key
            self.entry = entry
            self.cost = cost
        }
    }

    /// The limits this cache keeps to.
    public let limits: Limits
    private var nodes: [Key: Node] = [:]
    /// Most recently used; each node holds the next newer one strongly.
    private var newest: Node?
    private var oldest: Node?
    public private(set) var totalCost = 0

    private let keyCost: (Key) -> Int

    /// An empty cache with these limits; `keyCost` says how many bytes a key takes.
    public init(limits: Limits = Limits(), keyCost: @escaping (Key) -> Int = { _ in 0 }) {
        self.limits = limits
        self.keyCost = keyCost
    }

    /// The entries it holds now.
    public var count: Int { nodes.count }

    /// The entry, fresh or not, and marks it most recently used.
    public func entry(for key: Key) -> CacheEntry? {
        guard let node = nodes[key] else { return nil }
        moveToNewest(node)
        return node.entry
    }

    /// Stores `entry`, then drops the least recently used entries until both limits hold. An
    /// entry larger than the whole cost limit is not stored.
    public func insert(_ entry: CacheEntry, for key: Key) {
        remove(key)
        let cost = entry.cost + keyCost(key)
        guard cost <= limits.cost, limits.count > 0 else { return }
        let node = Node(key: key, entry: entry, cost: cost)
        nodes[key] = node
        totalCost += cost
        link(node)
        while totalCost > limits.cost || nodes.count > limits.count, let oldest { remove(oldest.key) }
    }

    /// Removes the entry for `key`, if any.
    public func remove(_ key: Key) {
        guard let node = nodes.removeValue(forKey: key) else { return }
        totalCost -= node.cost
        unlink(node)
    }

    /// Removes the entries whose key matches; returns how many.
    @discardableResult
    public func removeAll(where matches: (Key) -> Bool) -> Int {
        let doomed = nodes.keys.filter(matches)
        for key in doomed { remove(key) }
        return doomed.count
    }

    /// Removes every entry.
    public func removeAll() {
        nodes = [:]
        newest = nil
        oldest = nil
        totalCost = 0
    }

    /// Keys from least to most recently used.
    public var keysByAge: [Key] {
        var keys: [Key] = []
        var node = oldest
        while let current = node {
            keys.append(current.key)
            node = current.newer
        }
        return keys
    }

    private func link(_ node: Node) {
        node.older = newest
        node.newer = nil
        newest?.newer = node
        newest = node
        if oldest == nil { oldest = node }
    }

    private func unlink(_ node: Node) {
        if let older = node.older { older.newer = node.newer } else { oldest = node.newer }
        if let newer = node.newer { newer.older = node.older } else { newest = node.older }
        node.newer = nil
        node.older = nil
    }

    private func moveToNewest(_ node: Node) {
        guard newest !== node else { return }
        unlink(node)
        link(node)
    }
}
