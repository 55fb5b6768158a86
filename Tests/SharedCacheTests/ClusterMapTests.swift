import PipelineHost
import Testing

@testable import PipelineHostRedis

/// The cluster client's decisions as values: which slot a key is in, who serves it, what a
/// redirection says, and when to learn the map again. No redis-server; ClusterTests checks the
/// same against a real cluster.
@Suite struct ClusterMapTests {
    @Test func slotsAreRedisOwn() {
        // The cluster spec's check value, and slots Redis' CLUSTER KEYSLOT gives.
        #expect(KeySlot.crc16(Array("123456789".utf8)[...]) == 0x31C3)
        #expect(KeySlot.of("foo") == 12182)
        #expect(KeySlot.of("{user1000}.following") == KeySlot.of("{user1000}.followers"))
        // The spec's examples: an empty tag hashes the whole key; only the first tag counts.
        #expect(KeySlot.of("foo{}{bar}") == Int(KeySlot.crc16(Array("foo{}{bar}".utf8)[...])) & 16383)
        #expect(KeySlot.of("foo{{bar}}zap") == KeySlot.of("{bar"))
        #expect(KeySlot.of("foo{bar}{zap}") == KeySlot.of("bar"))
    }

    @Test func anEntrysKeysShareItsSlot() {
        let keys = LeaseKeys(RedisTier.names(StageKey(source: "https://example.com/a.jpg")).redis)
        let slots = Set([keys.value, keys.lock, keys.negative, keys.waiting].map(KeySlot.of))
        #expect(slots.count == 1)
        #expect(slots.first == KeySlot.of(keys.digest))
    }

    @Test func theMapSaysWhoServesASlotAndTakesAMove() {
        let (a, b, c) = (
            RedisNode(host: "10.0.0.1", port: 7000), RedisNode(host: "10.0.0.2", port: 7000),
            RedisNode(host: "10.0.0.3", port: 7000)
        )
        var map = SlotMap([(10923...16383, c), (0...5460, a), (5461...10922, b)])
        #expect(map.owner(of: 0) == a && map.owner(of: 5461) == b && map.owner(of: 16383) == c)
        #expect(map.masters == [a, b, c])
        map.move(5000, to: c)
        #expect(map.owner(of: 4999) == a && map.owner(of: 5000) == c && map.owner(of: 5001) == a)
        #expect(map.ranges.map(\.slots) == [0...4999, 5000...5000, 5001...5460, 5461...10922, 10923...16383])
        #expect(SlotMap([(0...10, a)]).owner(of: 11) == nil)
    }

    @Test func redirectionsParse() {
        let asked = RedisNode(host: "10.0.0.9", port: 7001)
        #expect(
            Redirection("MOVED 3999 127.0.0.1:6381", asked: asked)
                == .moved(slot: 3999, to: RedisNode(host: "127.0.0.1", port: 6381)))
        #expect(
            Redirection("ASK 3999 [::1]:6381", asked: asked) == .ask(slot: 3999, to: RedisNode(host: "::1", port: 6381))
        )
        #expect(
            Redirection("MOVED 3999 :6390", asked: asked)
                == .moved(slot: 3999, to: RedisNode(host: "10.0.0.9", port: 6390)))
        for other in ["ERR unknown command", "MOVED 99999 h:1", "MOVED x h:1", "CLUSTERDOWN The cluster is down"] {
            #expect(Redirection(other, asked: asked) == nil, "\(other)")
        }
    }

    @Test func theMapIsLearntAtFirstAfterAFailureAndNotMoreOftenThanTheInterval() {
        let start = ContinuousClock.now
        var state = TopologyState(interval: .milliseconds(100))
        func asks(at now: ContinuousClock.Instant) -> Bool { state.shouldRefresh(at: now) }
        #expect(asks(at: start))
        #expect(!asks(at: start + .milliseconds(10)), "one caller asks; the others use what there is")
        state.learnt(SlotMap([(0...16383, RedisNode(host: "a", port: 1))]))
        #expect(!asks(at: start + .seconds(5)), "a learnt map is kept while calls work")
        state.markStale()
        #expect(asks(at: start + .seconds(5)))
        state.markStale()
        #expect(!asks(at: start + .seconds(5) + .milliseconds(50)), "a dead node does not make every call ask")
        #expect(asks(at: start + .seconds(5) + .milliseconds(100)))
        state.moved(7, to: RedisNode(host: "b", port: 2))
        #expect(state.map?.owner(of: 7) == RedisNode(host: "b", port: 2))
        #expect(asks(at: start + .seconds(6)), "a MOVED says more of the map may have changed")
        #expect(state.refreshes == 1)
    }

    @Test func commandsAreRoutedByTheirKey() {
        func position(_ words: String...) -> Int? { RedisClient.keyPosition(words.map { Array($0.utf8) }) }
        #expect(position("GET", "k") == 1 && position("SET", "k", "v", "PX", "1") == 1 && position("exists", "k") == 1)
        #expect(position("EVAL", "script", "1", "k", "token") == 3)
        #expect(position("PUBLISH", "pipelinehost:v1:done", "digest") == 2, "by the entry's digest")
        #expect(position("EVAL", "script", "0") == nil && position("PING") == nil)
    }

    @Test func clusterAddressesParse() throws {
        let address = try #require(RedisAddress("redis+cluster://ann@10.0.0.1:7000,10.0.0.2,[::1]:7002"))
        #expect(address.isCluster && address.user == "ann" && address.database == 0)
        #expect(
            address.clusterSeeds == [
                RedisNode(host: "10.0.0.1", port: 7000), RedisNode(host: "10.0.0.2", port: 6379),
                RedisNode(host: "::1", port: 7002),
            ])
        #expect(address.description == "redis+cluster://ann@10.0.0.1:7000,10.0.0.2:6379,[::1]:7002")
        let withPassword = try #require(RedisAddress("redis+cluster://ann:pw@h:7000")).at(
            RedisNode(host: "h2", port: 7001))
        #expect(
            withPassword.password == "pw" && withPassword.host == "h2"
                && withPassword.description == "redis://ann@h2:7001/0")
        for bad in [
            "redis+cluster://", "redis+cluster://h:1,", "redis+cluster://h:1/2", "redis://h:1,h:2",
            "redis+cluster://h:0",
        ] {
            #expect(RedisAddress(bad) == nil, "\(bad)")
        }
        #expect(RedisAddress("redis+cluster://h:1/0")?.isCluster == true)
        #expect(RedisAddress("redis://h:1")?.isCluster == false)
    }
}
