import Foundation
import PipelineHost
import TestSupport
import Testing

@testable import PipelineHostRedis

/// One flight across nodes: three pipelines (three nodes' worth) on one redis-server.
@Suite(.serialized, .needs(.pixels, .network, .redis, .process), .loopbackOrigin) struct LeaseTests {
    let origin = LoopbackServer.fixture
    let redis: RedisServer

    init() async throws {
        redis = try await RedisServer()
    }

    func nodes(_ count: Int, leases: LeaseSettings = LeaseSettings()) throws -> [(
        pipeline: Pipeline, tier: RedisTier, directory: TemporaryDirectory
    )] {
        try (0..<count).map { _ in try SharedTierTests.node(redis.url, leases: leases) }
    }

    @Test func sixtyRequestsOverThreeNodesMakeOneTransferAndOneDecode() async throws {
        // Held until every request is in: the other nodes wait on the lease however slowly they
        // start, rather than finding the value stored.
        origin.route("/popular.jpg", .held(gate: "all-in", .ok(Fixtures.quadrants(width: 640, height: 400))))
        // A long lease: under ThreadSanitizer on two busy cores the work can take seconds, and a
        // lapsed lease would (rightly) let a waiter take over and decode again.
        let cluster = try nodes(3, leases: LeaseSettings(lease: .seconds(60), wait: .seconds(600)))
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<60 {
                let pipeline = cluster[index % 3].pipeline
                let request = ImageRequest(
                    source: origin.url("/popular.jpg?u=ann&t=t\(index)&s=s\(index)"), profile: "thumb")
                group.addTask { (try? await pipeline.image(for: request)) != nil }
            }
            for node in cluster { await node.pipeline.waitForActivity { $0.waitingRequests == 20 } }
            _ = await eventually { cluster.map(\.tier.stats.leasesWaited).reduce(0, +) == 2 }
            origin.open("all-in")
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.count == 60 && outcomes.allSatisfy { $0 })
        #expect(origin.requestCount("/popular.jpg") == 1)
        var decodes = 0
        for node in cluster { decodes += await node.pipeline.stats().decodes }
        #expect(decodes == 1, "\(cluster.map(\.tier.stats))")
        let stats = cluster.map(\.tier.stats)
        #expect(stats.map(\.leasesWon).reduce(0, +) == 2, "the variant's lease and, under it, the original's: \(stats)")
        #expect(stats.map(\.leasesWaited).reduce(0, +) == 2, "one waiter per other node: \(stats)")
        for node in cluster { await node.pipeline.flushCache() }
        #expect(try await redis.cli(["--scan", "--pattern", "pipelinehost:v1:lock:*"]).isEmpty, "every lease released")
    }

    @Test func sixtyCurlRequestsOverThreeServeNodesMakeOneTransferAndOneDecode() async throws {
        origin.route("/served.jpg", .delayed(seconds: 0.5, .ok(Fixtures.quadrants(width: 640, height: 400))))
        let directory = try TemporaryDirectory()
        let profile = try SharedTierTests.serveProfile(in: directory)
        let nodes = try await [1, 2, 3].asyncMap { index in
            try await ServeProcess(
                profileFile: profile,
                [
                    "--allow-unsigned", "--shared-cache", redis.url, "--no-access-log",
                    "--shared-lease", "60", "--shared-wait", "90", "--request-timeout", "300",
                    "--cache-dir", directory.file("node\(index)"),
                ] + RedisServer.sharedTimeoutFlag)
        }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<60 {
                // A fresh auth salt on each request, as a Subsonic client sends.
                let url =
                    nodes[index % 3].baseURL + "/unsafe/thumb/"
                    + base64url(origin.url("/served.jpg?u=ann&t=t\(index)&s=s\(index)"))
                group.addTask { try await Curl.get(url).status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 60))
        #expect(origin.requestCount("/served.jpg") == 1)
        var decodes: [Bool] = []
        for node in nodes {
            decodes.append(
                try await Curl.get(node.baseURL + "/metrics").text.contains("pipelinehost_decodes_total 1\n"))
        }
        #expect(decodes.filter { $0 }.count == 1, "exactly one node decoded, once")
        for node in nodes { _ = try await node.stop() }
    }

    @Test func aWaiterWakesWhenTheLeaderPublishesNotAtItsNextPoll() async throws {
        origin.route("/slow.jpg", .held(gate: "publish", .ok(Fixtures.quadrants(width: 320, height: 200))))
        // Polling every 300 s: only the done channel can wake the waiter before its next poll,
        // and no machine is so slow that the gap between the two is in doubt.
        let cluster = try nodes(2, leases: LeaseSettings(wait: .seconds(600), poll: .seconds(300)))
        let request = ImageRequest(source: origin.url("/slow.jpg"), profile: "thumb")
        let first = Task { try await cluster[0].pipeline.image(for: request) }
        // The leader holds the lease and is fetching; then the second node waits on it.
        #expect(await eventually { origin.requestCount("/slow.jpg") == 1 })
        let waiting = Task { try await cluster[1].pipeline.image(for: request) }
        #expect(await eventually { cluster[1].tier.stats.leasesWaited == 1 })
        let published = ContinuousClock.now
        origin.open("publish")
        _ = try await first.value
        let second = try await waiting.value
        #expect(ContinuousClock.now - published < .seconds(150), "woken by the done channel, not by the 300 s poll")
        #expect(cluster[1].tier.doneMessages >= 1)
        #expect(cluster[1].tier.stats.leasesWaited == 1 && cluster[1].tier.stats.hits >= 1, "\(cluster[1].tier.stats)")
        #expect(second.size == PixelSize(width: 48, height: 48))
        #expect(origin.requestCount("/slow.jpg") == 1)
    }

    @Test func aClientLeavingTheLeaderDoesNotCancelWorkAnotherNodeWaitsFor() async throws {
        // Held until the leader's client has left: the work is still under way when it does.
        origin.route("/shared.jpg", .held(gate: "leader-left", .ok(Fixtures.quadrants(width: 640, height: 400))))
        let cluster = try nodes(2, leases: LeaseSettings(lease: .seconds(60), wait: .seconds(90)))
        let request = ImageRequest(source: origin.url("/shared.jpg"), profile: "thumb")
        let leader = Task { try await cluster[0].pipeline.image(for: request) }
        #expect(await eventually { origin.requestCount("/shared.jpg") == 1 })
        let waiter = Task { try await cluster[1].pipeline.image(for: request) }
        #expect(await eventually { cluster[1].tier.stats.leasesWaited == 1 })
        leader.cancel()
        let leaderOutcome = await leader.result
        origin.open("leader-left")
        #expect(throws: PipelineError.self) { try leaderOutcome.get() }

        let image = try await waiter.value
        #expect(image.size == PixelSize(width: 48, height: 48))
        #expect(origin.requestCount("/shared.jpg") == 1, "the leader's work went on and was stored for the waiter")
        #expect(cluster.map(\.tier.stats.leasesTakenOver).reduce(0, +) == 0)
        #expect(await cluster[1].pipeline.stats().decodes == 0)
        for node in cluster { await node.pipeline.flushCache() }
        #expect(try await redis.cli(["--scan", "--pattern", "pipelinehost:v1:lock:*"]).isEmpty, "every lease released")
    }

    @Test func aClientLeavingTheLeaderCancelsWorkNobodyElseWaitsFor() async throws {
        // A transfer under way that never ends: only a cancellation stops it.
        origin.route("/alone.jpg", .stalled(Fixtures.quadrants(width: 640, height: 400), gate: "never", sent: 64))
        let cluster = try nodes(2)
        let leader = Task {
            try await cluster[0].pipeline.image(for: ImageRequest(source: origin.url("/alone.jpg"), profile: "thumb"))
        }
        #expect(await eventually { origin.requestCount("/alone.jpg") == 1 })
        leader.cancel()
        _ = await leader.result
        // The transfer was cut off: the cancelled work stores nothing and lets its lease go.
        #expect(await eventually { origin.abortedCount("/alone.jpg") == 1 })
        await cluster[0].pipeline.flushCache()
        let keys = {
            try await redis.cli(["--scan", "--pattern", "pipelinehost:v1:*"]).trimmingCharacters(
                in: .whitespacesAndNewlines)
        }
        #expect(await eventually { (try? await keys())?.isEmpty == true })
        #expect(try await keys().isEmpty, "a key is left")
        #expect(await cluster[0].pipeline.stats().decodes == 0)
    }

    @Test func aFailureIsRememberedBrieflySoOtherNodesFailFast() async throws {
        origin.route("/gone.jpg", .delayed(seconds: 0.4, .status(404)))
        let cluster = try nodes(3)
        let errors = await withTaskGroup(of: PipelineError?.self) { group in
            for node in cluster {
                let request = ImageRequest(source: origin.url("/gone.jpg"), profile: "thumb")
                group.addTask {
                    do throws(PipelineError) {
                        _ = try await node.pipeline.image(for: request)
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            return await group.reduce(into: [PipelineError?]()) { $0.append($1) }
        }
        #expect(errors.allSatisfy { $0?.kind == .httpStatus })
        #expect(errors.allSatisfy { $0?.details?.jsonFields["http_status"] == ErrorField.integer(404) }, "\(errors)")
        #expect(origin.requestCount("/gone.jpg") == 1)
        #expect(cluster.map(\.tier.stats.negativeHits).reduce(0, +) == 2)
    }

    /// A drain (flushCache) returns only once the tier's own tasks are done: a failure's
    /// negative entry and lease release, and a lease whose work stored nothing (the origin said
    /// no-store), which is released at once instead of after its grace.
    @Test func flushingTheCacheLeavesNoLeaseBehind() async throws {
        origin.route("/missing.jpg", .status(404))
        origin.route(
            "/private.jpg", .headers(["Cache-Control": "no-store"], .ok(Fixtures.quadrants(width: 64, height: 64))))
        // A grace (the lease's length) far longer than the test: only the drain can release it.
        let node = try nodes(1, leases: LeaseSettings(lease: .seconds(600), wait: .seconds(600)))[0]
        await #expect(throws: PipelineError.self) {
            try await node.pipeline.image(for: ImageRequest(source: origin.url("/missing.jpg"), profile: "thumb"))
        }
        _ = try await node.pipeline.image(for: ImageRequest(source: origin.url("/private.jpg"), profile: "thumb"))
        await node.pipeline.flushCache()
        #expect(try await redis.cli(["--scan", "--pattern", "pipelinehost:v1:lock:*"]).isEmpty, "every lease released")
        #expect(
            try await !redis.cli(["--scan", "--pattern", "pipelinehost:v1:neg:*"]).isEmpty, "the 404 is remembered")
        #expect(node.tier.background.count == 0)
    }

    /// The key leaves out credentials and dropped parameters, so a failure that may depend on
    /// them (a wrong password's 401) is not told to other nodes under that key.
    @Test(arguments: [
        "http://x:wrong@127.0.0.1:PORT/private.jpg", "http://127.0.0.1:PORT/private.jpg?u=ann&t=wrong&s=1",
    ])
    func aFailureThatCanDependOnHiddenPartsIsNotRemembered(_ template: String) async throws {
        origin.route("/private.jpg", .status(401))
        let cluster = try nodes(2)
        let withHiddenParts = template.replacingOccurrences(of: "PORT", with: "\(origin.port)")
        let first = await #expect(throws: PipelineError.self) {
            try await cluster[0].pipeline.image(for: ImageRequest(source: withHiddenParts, profile: "thumb"))
        }
        #expect(first?.details?.jsonFields["http_status"] == ErrorField.integer(401))
        // The lease is released after the negative entry would have been written.
        #expect(
            await eventually {
                (try? await redis.cli(["--scan", "--pattern", "pipelinehost:v1:lock:*"]))?.isEmpty == true
            })
        let second = await #expect(throws: PipelineError.self) {
            try await cluster[1].pipeline.image(for: ImageRequest(source: origin.url("/private.jpg"), profile: "thumb"))
        }
        #expect(second?.reason.contains("remembered") == false, "\(String(describing: second))")
        #expect(origin.requestCount("/private.jpg") == 2, "the second node asked the origin itself")
        #expect(cluster[1].tier.stats.negativeHits == 0)
    }

    /// The other way round: a failure remembered for the plain URL does not answer a request
    /// that carries credentials the key leaves out; it asks the origin itself.
    @Test func aRequestWithHiddenPartsDoesNotTakeARememberedFailure() async throws {
        origin.route("/locked.jpg", .status(401))
        let cluster = try nodes(2)
        _ = await #expect(throws: PipelineError.self) {
            try await cluster[0].pipeline.image(for: ImageRequest(source: origin.url("/locked.jpg"), profile: "thumb"))
        }
        #expect(
            await eventually {
                (try? await redis.cli(["--scan", "--pattern", "pipelinehost:v1:lock:*"]))?.isEmpty == true
            })
        let withPassword = "http://me:secret@127.0.0.1:\(origin.port)/locked.jpg"
        let error = await #expect(throws: PipelineError.self) {
            try await cluster[1].pipeline.image(for: ImageRequest(source: withPassword, profile: "thumb"))
        }
        #expect(error?.reason.contains("remembered") == false, "\(String(describing: error))")
        #expect(origin.requestCount("/locked.jpg") == 2)
    }

    @Test func twoRunProcessesOverOneListShareTheWork() async throws {
        for id in 1...6 {
            origin.route("/cover-\(id).jpg", .delayed(seconds: 0.3, .ok(Fixtures.quadrants(width: 320, height: 200))))
        }
        let directory = try TemporaryDirectory()
        let profile = try directory.write("shared.lua", Array(SharedTierTests.profile.utf8))
        let list = try directory.write(
            "urls.txt", Array((1...6).map { origin.url("/cover-\($0).jpg") }.joined(separator: "\n").utf8))
        let runs = try (1...2).map { index in
            try CLIProcess.start(
                [
                    "run", profile, "--input-list", list, "--output-dir", directory.file("out\(index)"),
                    "--cache-dir", directory.file("cache\(index)"), "--shared-cache", redis.url, "--no-progress",
                ] + RedisServer.sharedTimeoutFlag)
        }
        for run in runs {
            let outcome = try await run.finished()
            #expect(outcome.status == 0, "\(outcome.stderr)")
        }
        #expect((1...6).map { origin.requestCount("/cover-\($0).jpg") } == Array(repeating: 1, count: 6))
    }

    @Test func whenTheLeaderDiesAWaiterTakesOverOnceItsLeaseLapses() async throws {
        // The leader's transfer never ends; the next request for the same path is answered.
        origin.route("/stuck.jpg", .sequence([.held(gate: "never", .ok(Fixtures.sample)), .ok(Fixtures.sample)]))
        let directory = try TemporaryDirectory()
        let profile = try SharedTierTests.serveProfile(in: directory)
        let arguments =
            [
                "--allow-unsigned", "--shared-cache", redis.url, "--shared-lease", "1", "--no-access-log",
            ] + RedisServer.sharedTimeoutFlag
        let leader = try await ServeProcess(profileFile: profile, arguments + ["--cache-dir", directory.file("a")])
        // The waiter would wait 600 s for a live leader: only the lapsed lease lets it answer
        // within its client's 300 s.
        let waiter = try await ServeProcess(
            profileFile: profile,
            arguments + ["--cache-dir", directory.file("b"), "--shared-wait", "600", "--request-timeout", "900"])
        let path = "/unsafe/thumb/" + base64url(origin.url("/stuck.jpg"))
        async let lost = Curl.get(leader.baseURL + path, maxTime: 600)
        #expect(await eventually { origin.requestCount("/stuck.jpg") == 1 })
        async let taken = Curl.get(waiter.baseURL + path, maxTime: 300)
        #expect(
            await eventually {
                (try? await Curl.get(waiter.baseURL + "/metrics").text)?.contains(
                    "pipelinehost_leases_waited_total 1\n") == true
            }, "the waiter waits on the leader's lease")
        leader.running.send(SIGKILL)
        let answer = try await taken
        #expect(answer.status == 200)
        #expect(origin.requestCount("/stuck.jpg") == 2)
        // The variant's lease, and the original's too when the waiter found it still held: the
        // dead leader held both, and which one lapses first is the kernel's timing.
        let takenOver = await waiter.metric("pipelinehost_leases_taken_over_total") ?? 0
        #expect((1...2).contains(takenOver), "taken over: \(takenOver)")
        _ = try? await lost
        _ = try await waiter.stop()
    }
}

/// Serve nodes under load while their Redis dies and comes back.
@Suite(.serialized, .needs(.pixels, .network, .redis, .process)) struct RedisFaultTests {
    @Test func redisKilledUnderLoadFailsNoRequestAndIsUsedAgainAfterItRestarts() async throws {
        let origin = try LoopbackServer()
        for id in 0..<80 { origin.route("/c\(id).jpg", .ok(Fixtures.quadrants(width: 320, height: 200))) }
        let redis = try await RedisServer()
        let directory = try TemporaryDirectory()
        let profile = try SharedTierTests.serveProfile(in: directory)
        let nodes = try await [1, 2].asyncMap { index in
            try await ServeProcess(
                profileFile: profile,
                [
                    "--allow-unsigned", "--shared-cache", redis.url, "--no-access-log",
                    "--cache-dir", directory.file("node\(index)"),
                ])
        }
        func load(_ ids: Range<Int>) async throws -> [Int] {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for id in ids {
                    let node = nodes[id % 2]
                    group.addTask {
                        try await Curl.get(node.baseURL + "/unsafe/thumb/" + base64url(origin.url("/c\(id).jpg")))
                            .status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        async let during = load(0..<30)
        // Redis dies while the load is under way.
        #expect(await eventually { (0..<30).contains { origin.requestCount("/c\($0).jpg") > 0 } })
        await redis.stop()
        #expect(try await during == Array(repeating: 200, count: 30))
        #expect(try await load(30..<34).allSatisfy { $0 == 200 })

        try await redis.start()
        #expect(try await load(34..<40).allSatisfy { $0 == 200 })
        // Each look sends a new request, so a breaker that opened again (a 50 ms call that
        // timed out on a loaded machine) gets its next probe.
        var next = 40
        #expect(
            await eventually {
                next += 1
                _ = try? await load((next % 40 + 40)..<(next % 40 + 41))
                return
                    ((try? await redis.cli(["DBSIZE"])).flatMap {
                        Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
                    } ?? 0) > 0
            })
        for node in nodes { _ = try await node.stop() }
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var mapped: [T] = []
        for element in self { mapped.append(try await transform(element)) }
        return mapped
    }
}
