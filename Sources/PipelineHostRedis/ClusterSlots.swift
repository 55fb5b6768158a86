/// One node of Redis: where it listens.
public struct RedisNode: Sendable, Hashable, CustomStringConvertible {
    public let host: String
    public let port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host`, `host:port`, `[v6]` or `[v6]:port`; nil when the port is not one.
    init?(_ text: Substring, defaultPort: Int = 6379) {
        var host = text, portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { return nil }
            portText = rest.isEmpty ? nil : rest.dropFirst()
        } else if let colon = text.firstIndex(of: ":") {
            guard text.lastIndex(of: ":") == colon else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        var port = defaultPort
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else { return nil }
            port = number
        }
        guard !host.isEmpty else { return nil }
        self.init(host: String(host), port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Which of a Redis Cluster's 16384 slots a key lives in: CRC16 (XMODEM) of the key, or of its
/// hash tag (the text between the first `{` and the next `}`, when that is not empty), so keys
/// that share a tag share a slot, and so a shard. The rule is Redis' own (cluster spec).
public enum KeySlot {
    public static let count = 16384

    public static func of(_ key: some Collection<UInt8>) -> Int {
        let bytes = Array(key)
        var hashed = bytes[...]
        if let open = bytes.firstIndex(of: UInt8(ascii: "{")),
            let close = bytes[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1
        {
            hashed = bytes[(open + 1)..<close]
        }
        return Int(crc16(hashed)) & (count - 1)
    }

    public static func of(_ key: String) -> Int { of(Array(key.utf8)) }

    static func crc16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return crc
    }
}

/// A cluster's slot map: which master serves each slot, as `CLUSTER SLOTS` said, with single
/// slots moved since (a `MOVED` answer).
public struct SlotMap: Sendable, Equatable {
    /// Each range's master, sorted by start.
    public private(set) var ranges: [(slots: ClosedRange<Int>, node: RedisNode)]

    public init(_ ranges: [(slots: ClosedRange<Int>, node: RedisNode)]) {
        self.ranges = ranges.sorted { $0.slots.lowerBound < $1.slots.lowerBound }
    }

    /// The master serving `slot`, if the map covers it.
    public func owner(of slot: Int) -> RedisNode? {
        var low = 0, high = ranges.count - 1
        while low <= high {
            let middle = (low + high) / 2
            let range = ranges[middle].slots
            if slot < range.lowerBound {
                high = middle - 1
            } else if slot > range.upperBound {
                low = middle + 1
            } else {
                return ranges[middle].node
            }
        }
        return nil
    }

    /// The masters, each once, in slot order.
    public var masters: [RedisNode] {
        var seen = Set<RedisNode>()
        return ranges.map(\.node).filter { seen.insert($0).inserted }
    }

    /// The map after `MOVED slot node`: that one slot is now `node`'s.
    public mutating func move(_ slot: Int, to node: RedisNode) {
        guard let index = ranges.firstIndex(where: { $0.slots.contains(slot) }) else {
            ranges.append((slot...slot, node))
            self = SlotMap(ranges)
            return
        }
        let range = ranges[index].slots, old = ranges[index].node
        guard old != node else { return }
        var pieces: [(slots: ClosedRange<Int>, node: RedisNode)] = []
        if range.lowerBound < slot { pieces.append((range.lowerBound...(slot - 1), old)) }
        pieces.append((slot...slot, node))
        if slot < range.upperBound { pieces.append(((slot + 1)...range.upperBound, old)) }
        ranges.replaceSubrange(index...index, with: pieces)
    }

    public static func == (lhs: SlotMap, rhs: SlotMap) -> Bool {
        lhs.ranges.map(\.slots) == rhs.ranges.map(\.slots) && lhs.ranges.map(\.node) == rhs.ranges.map(\.node)
    }
}

/// A cluster's answer that a key's slot is served elsewhere: `MOVED slot host:port` (for good:
/// the map is out of date) or `ASK slot host:port` (once, during a migration, after `ASKING`).
public enum Redirection: Sendable, Equatable {
    case moved(slot: Int, to: RedisNode)
    case ask(slot: Int, to: RedisNode)

    /// Parses an error reply; nil when it is no redirection. An empty host means the node that
    /// answered (`asked`).
    public init?(_ error: String, asked: RedisNode) {
        let words = error.split(separator: " ")
        guard words.count == 3, let slot = Int(words[1]), (0..<KeySlot.count).contains(slot) else { return nil }
        let target =
            words[2].hasPrefix(":")
            ? RedisNode(host: asked.host, port: Int(words[2].dropFirst()) ?? 0)
            : RedisNode(words[2])
        guard let target, target.port > 0 else { return nil }
        switch words[0] {
        case "MOVED": self = .moved(slot: slot, to: target)
        case "ASK": self = .ask(slot: slot, to: target)
        default: return nil
        }
    }
}

/// When a cluster client learns its map again, as a value given the time: at the first call,
/// and after a redirection or a failed call (a failover moves masters), at most once per
/// `interval` so that a dead node does not make every call ask for the map.
public struct TopologyState: Sendable {
    public private(set) var map: SlotMap?
    public let interval: Duration
    private var stale = true
    private var lastAsked: ContinuousClock.Instant?
    /// How many times the map was learnt.
    public private(set) var refreshes = 0

    public init(interval: Duration = .milliseconds(100)) { self.interval = interval }

    /// Whether a call at `now` should ask for the map first; if so, the asking is noted, so
    /// that concurrent calls do not ask too.
    public mutating func shouldRefresh(at now: ContinuousClock.Instant) -> Bool {
        guard stale else { return false }
        if let lastAsked, now - lastAsked < interval { return false }
        lastAsked = now
        return true
    }

    /// The map as a node just told it.
    public mutating func learnt(_ map: SlotMap) {
        self.map = map
        stale = false
        refreshes += 1
    }

    /// A call failed or was redirected: ask for the map again soon.
    public mutating func markStale() { stale = true }

    /// A `MOVED`: the slot is the node's now, and the rest of the map may be out of date too.
    public mutating func moved(_ slot: Int, to node: RedisNode) {
        map?.move(slot, to: node)
        stale = true
    }
}
