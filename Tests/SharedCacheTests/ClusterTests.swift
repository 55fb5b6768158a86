import Foundation
import PipelineHost
import TestSupport
import Testing

@testable import PipelineHostRedis

/// The shared tier on a Redis Cluster of 3 masters and 3 replicas, started for each test.
@Suite(.serialized, .needs(.pixels, .network, .redis, .process), .loopbackOrigin, .hangLimit)
struct ClusterTests {
    let origin = LoopbackServer.fixture

    /// A node: its own pipeline, memory and disk, and a tier on the cluster.
    struct Node {
        let pipeline: Pipeline
        let tier: RedisTier
        let directory: TemporaryDirectory
    }

    func node(_ cluster: RedisCluster, leases: LeaseSettings = LeaseSettings()) throws -> Node {
        // A generous timeout: the machine runs other tests at the same time, and a call that
        // timed out would (rightly) make a node compute alone.
        let tier = RedisTier(
            client: RedisClient(address: try #require(RedisAddress(cluster.url)), timeout: RedisServer.callTimeout),
            leases: leases)
        let directory = try TemporaryDirectory()
        let pipeline = Pipeline(
            profiles: try TestPipeline.load(SharedTierTests.profile),
            configuration: PipelineConfiguration(
                cache: CacheSettings(directory: directory.path, additionalTiers: [tier])))
        return Node(pipeline: pipeline, tier: tier, directory: directory)
    }

    func request(_ path: String) -> ImageRequest { ImageRequest(source: origin.url(path), profile: "thumb") }

    /// Asks each source on `node`; how many succeeded.
    func load(_ paths: [String], on nodes: [Node]) async -> Int {
        await withTaskGroup(of: Bool.self) { group in
            for (index, path) in paths.enumerated() {
                let pipeline = nodes[index % nodes.count].pipeline, request = request(path)
                group.addTask { (try? await pipeline.image(for: request)) != nil }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
    }

    @Test func sixtyRequestsOverThreeNodesMakeOneTransfer() async throws {
        let cluster = try await RedisCluster()
        defer { cluster.stopNow() }
        origin.route("/cluster-popular.jpg", .delayed(seconds: 0.5, .ok(Fixtures.quadrants(width: 640, height: 400))))
        let nodes = try (0..<3).map { _ in
            try node(cluster, leases: LeaseSettings(lease: .seconds(60), wait: .seconds(90)))
        }
        let succeeded = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<60 {
                let pipeline = nodes[index % 3].pipeline
                let request = request("/cluster-popular.jpg?u=ann&t=t\(index)&s=s\(index)")
                group.addTask { (try? await pipeline.image(for: request)) != nil }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(succeeded == 60)
        #expect(origin.requestCount("/cluster-popular.jpg") == 1)
        var decodes = 0
        for node in nodes { decodes += await node.pipeline.stats().decodes }
        #expect(decodes == 1, "\(nodes.map(\.tier.stats))")
        #expect(nodes.map(\.tier.stats.errors).reduce(0, +) == 0, "\(nodes.map(\.tier.stats))")
        for node in nodes { await node.pipeline.flushCache() }
        for master in try await cluster.masters() {
            #expect(
                try await cluster.keys(on: master, matching: "pipelinehost:v1:lock:*").isEmpty, "every lease released")
        }
    }

    @Test func aPurgeReachesEveryShardAndEveryNode() async throws {
        let cluster = try await RedisCluster()
        defer { cluster.stopNow() }
        let paths = (1...6).map { "/cluster-purge-\($0).jpg" }
        for path in paths { origin.route(path, .ok(Fixtures.quadrants(width: 64, height: 48))) }
        let (a, b) = (try node(cluster), try node(cluster))
        #expect(await load(paths, on: [a]) == 6)
        await a.pipeline.flushCache()
        #expect(await load(paths, on: [b]) == 6)
        #expect(b.tier.stats.hits == 6, "b was served from the cluster")
        let heard = b.tier.doneMessages

        // One source's entries live on whichever shards their keys hash to; its index on another.
        let report = await a.pipeline.purge(sources: [origin.url(paths[0])])
        #expect(report.failures.isEmpty, "\(report)")
        #expect(report.removed["shared"] == 2, "the original and the variant: \(report)")
        #expect(await eventually { b.tier.doneMessages > heard }, "b heard the purge")
        #expect(await eventually { await b.pipeline.stats().purges == 1 }, "and carried it out")
        let again = try await b.pipeline.image(for: request(paths[0]))
        #expect(!again.memoryHit && !again.sharedHit)
        #expect(origin.requestCount(paths[0]) == 2, "one transfer after the purge")
        #expect(try await b.pipeline.image(for: request(paths[1])).memoryHit, "another source is untouched")
    }

    @Test func entriesSpreadOverTheMastersOnTheSlotsRedisGivesTheirKeys() async throws {
        let cluster = try await RedisCluster()
        defer { cluster.stopNow() }
        let paths = (0..<30).map { "/spread-\($0).png" }
        for path in paths { origin.route(path, .ok(Fixtures.quadrants(width: 64, height: 48))) }
        let (first, second) = (try node(cluster), try node(cluster))
        #expect(await load(paths, on: [first]) == 30)
        await first.pipeline.flushCache()
        var stored: [String] = []
        for master in try await cluster.masters() {
            let keys = try await cluster.keys(on: master, matching: "pipelinehost:v1:*")
            #expect(!keys.isEmpty, "60 entries (an original and a variant per source) leave no master empty")
            for key in keys {
                // The client's slot and Redis' own agree (the two must never differ).
                #expect(try await master.command("CLUSTER", "KEYSLOT", key) == .integer(KeySlot.of(key)), "\(key)")
            }
            stored += keys
        }
        #expect(stored.filter { $0.hasPrefix("pipelinehost:v1:{") }.count == 60, "\(stored)")
        #expect(stored.filter { $0.hasPrefix("pipelinehost:v1:src:{") }.count == 30, "one index per source, for purge")
        #expect(first.tier.client.slotMap?.masters.count == 3)

        #expect(await load(paths, on: [second]) == 30)
        #expect(paths.allSatisfy { origin.requestCount($0) == 1 }, "the second node was served from the cluster")
        #expect(second.tier.stats.hits == 30 && second.tier.stats.errors == 0, "\(second.tier.stats)")
    }

    @Test func aWaiterSubscribedToAnotherShardWakesByTheDoneChannel() async throws {
        let cluster = try await RedisCluster()
        defer { cluster.stopNow() }
        let client = RedisClient(address: try #require(RedisAddress(cluster.url)), timeout: RedisServer.callTimeout)
        _ = try await client.command("PING")
        let digest = RedisTier.names(StageKey(source: origin.url("/any.jpg"))).name
        let map = try #require(client.slotMap)
        let publisher = try #require(map.owner(of: KeySlot.of(digest)))
        // The waiter's subscriber is on a master of another shard than the one the message goes to.
        let other = try #require(map.masters.first { $0 != publisher })
        let channel = DoneChannel { [client.address.at(other)] }
        defer { channel.stop() }
        // Only the message can end this wait within the suite's time limit.
        async let woken: Void = channel.wait(for: digest, upTo: .seconds(600))
        #expect(await eventually { channel.isSubscribed && channel.waiterCount == 1 })
        _ = try await client.command("PUBLISH", DoneChannel.name, digest)
        await woken
        #expect(channel.messagesReceived == 1)
    }

    @Test func aSlotBeingMigratedIsFollowedByAskAndThenByMoved() async throws {
        let cluster = try await RedisCluster()
        defer { cluster.stopNow() }
        let client = RedisClient(address: try #require(RedisAddress(cluster.url)), timeout: RedisServer.callTimeout)
        _ = try await client.command("PING")
        let key = "pipelinehost:v1:{migrating}", slot = KeySlot.of(key)
        let map = try #require(client.slotMap)
        let owner = try #require(map.owner(of: slot)), target = try #require(map.masters.first { $0 != owner })
        let masters = try await cluster.masters()
        let source = try #require(masters.first { $0.port == owner.port }),
            destination = try #require(masters.first { $0.port == target.port })
        func id(_ node: RedisServer) async throws -> String { try await node.command("CLUSTER", "MYID").text }
        // The operator's first two steps of moving a slot (redis-cli --cluster reshard does the same).
        #expect(
            try await destination.command("CLUSTER", "SETSLOT", String(slot), "IMPORTING", try await id(source))
                == .text("OK"))
        #expect(
            try await source.command("CLUSTER", "SETSLOT", String(slot), "MIGRATING", try await id(destination))
                == .text("OK"))
        // The source does not have the key: it answers ASK, and the client asks the destination.
        #expect(try await client.command("SET", key, "v") == .status("OK"))
        #expect(try await client.command("GET", key) == .string(Array("v".utf8)))
        #expect(try await source.command("GET", key) == .error("ASK \(slot) 127.0.0.1:\(destination.port)"))
        #expect(client.slotMap?.owner(of: slot) == owner, "an ASK does not change the map")
        // The slot is the destination's now: the source answers MOVED, and the map follows.
        for node in masters {
            #expect(
                try await node.command("CLUSTER", "SETSLOT", String(slot), "NODE", try await id(destination))
                    == .text("OK"))
        }
        #expect(try await client.command("GET", key) == .string(Array("v".utf8)))
        #expect(client.slotMap?.owner(of: slot) == target)
    }

    @Test func aMasterKilledFailsNoRequestAndSharingResumesAfterTheFailover() async throws {
        let cluster = try await RedisCluster()
        defer { cluster.stopNow() }
        func paths(_ name: String) -> [String] { (0..<30).map { "/\(name)-\($0).png" } }
        for path in paths("before") + paths("during") + paths("after") {
            origin.route(path, .ok(Fixtures.quadrants(width: 64, height: 48)))
        }
        let (a, b) = (try node(cluster), try node(cluster))
        #expect(await load(paths("before"), on: [a]) == 30)
        await a.pipeline.flushCache()

        // The master with the most entries dies, once its replica has them all.
        var holdings: [(master: RedisServer, count: Int)] = []
        for master in try await cluster.masters() {
            holdings.append((master, try await cluster.keys(on: master).count))
        }
        let victim = try #require(holdings.max { $0.count < $1.count }).master
        #expect(
            await eventually {
                for node in cluster.nodes where node.port != victim.port {
                    let info = (try? await node.command("INFO", "replication"))?.text ?? ""
                    if info.contains("master_port:\(victim.port)") {
                        return (try? await node.command("DBSIZE")) == .integer(holdings.map(\.count).max()!)
                    }
                }
                return false
            })
        await victim.stop()

        // While the cluster notices and promotes the replica, every request is answered.
        #expect(await load(paths("during") + paths("before"), on: [a, b]) == 60)
        #expect(try await cluster.waitUntilServing(replicas: 2))

        // Both nodes follow the new map with no restart: once their breakers let calls through
        // again, what one makes the other is served from the cluster.
        for node in [a, b] {
            #expect(await eventually { (try? await node.tier.client.command("PING")) == .status("PONG") })
        }
        let refreshes = b.tier.client.mapRefreshes
        #expect(await load(paths("after"), on: [a]) == 30)
        await a.pipeline.flushCache()
        let promoted = try await cluster.masters().filter { master in
            !holdings.contains { $0.master.port == master.port }
        }
        #expect(promoted.count == 1)
        #expect(
            try await !cluster.keys(on: promoted[0], matching: "pipelinehost:v1:*").isEmpty,
            "new entries on the promoted replica")
        #expect(await load(paths("after"), on: [b]) == 30)
        #expect(paths("after").allSatisfy { origin.requestCount($0) == 1 }, "\(b.tier.stats)")
        #expect(b.tier.client.slotMap?.masters.contains(RedisNode(host: "127.0.0.1", port: promoted[0].port)) == true)
        #expect(b.tier.client.mapRefreshes >= refreshes)
    }

    @Test func aDeadMasterWithNoReplicaStopsOnlyItsOwnSlotsCalls() async throws {
        let cluster = try await RedisCluster(masters: 3, replicas: 0)
        defer { cluster.stopNow() }
        let client = RedisClient(
            address: try #require(RedisAddress(cluster.url)), timeout: RedisServer.callTimeout,
            breaker: CircuitBreaker(threshold: 2, cooldown: .seconds(600)))
        _ = try await client.command("PING")
        let map = try #require(client.slotMap)
        let dead = map.masters[2]
        // Keys on each side, found by the slot rule (the same every run).
        let names = (0..<100).map { "pipelinehost:v1:{k\($0)}" }
        let deadKey = try #require(names.first { map.owner(of: KeySlot.of($0)) == dead })
        let liveKeys = names.filter { map.owner(of: KeySlot.of($0)) != dead }.prefix(10)
        try #require(liveKeys.count == 10)
        let deadServer = try #require(cluster.nodes.first { $0.port == dead.port })
        await deadServer.stop()

        for _ in 0..<2 { _ = try? await client.command("GET", deadKey) }
        let refused = await #expect(throws: RedisClient.Failure.self) { try await client.command("GET", deadKey) }
        #expect(refused?.breakerOpen == true, "its breaker is open: nothing was sent")
        for key in liveKeys {
            #expect(
                try await client.command("SET", key, "v") == .status("OK"), "the other masters' breakers stay closed")
        }
        #expect(client.breakerOpenings == 1)
    }

    @Test func twoRunsThroughAClusterWithAPasswordShareTheWork() async throws {
        let cluster = try await RedisCluster(password: "cluster-pw-7")
        defer { cluster.stopNow() }
        for id in 1...4 { origin.route("/cluster-run-\(id).jpg", .ok(Fixtures.quadrants(width: 320, height: 200))) }
        let directory = try TemporaryDirectory()
        let profile = try directory.write("shared.lua", Array(SharedTierTests.profile.utf8))
        for index in 1...2 {
            let run = try CLIProcess.start(
                [
                    "run", profile, "--output-dir", directory.file("out\(index)"), "--cache-dir",
                    directory.file("cache\(index)"),
                    "--shared-cache", cluster.url, "--no-progress",
                ] + RedisServer.sharedTimeoutFlag
                    + (1...4).map { origin.url("/cluster-run-\($0).jpg") },
                environment: ["PIPELINEHOST_REDIS_PASSWORD": "cluster-pw-7"])
            let outcome = try await run.finished()
            #expect(outcome.status == 0, "\(outcome.stderr)")
            #expect(!outcome.output.contains("cluster-pw-7"))
        }
        #expect(
            (1...4).map { origin.requestCount("/cluster-run-\($0).jpg") } == [1, 1, 1, 1],
            "the second run was served from the cluster")
        let wrong = try await CLIProcess.run(
            ["run", profile, "--shared-cache", cluster.url, origin.url("/cluster-run-1.jpg")],
            environment: ["PIPELINEHOST_REDIS_PASSWORD": "not-it"])
        #expect(
            wrong.status == 2 && wrong.stderr.contains("refused the credentials") && !wrong.output.contains("not-it"),
            "\(wrong.output)")
    }
}
