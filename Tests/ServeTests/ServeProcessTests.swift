import Foundation
import TestSupport
import Testing

/// `pipelinehost serve` as a user runs it: a subprocess on a loopback port, called with curl, in
/// front of the loopback origin.
@Suite(.serialized, .needs(.pixels, .network, .process), .loopbackOrigin) struct ServeProcessTests {
    static let profile = Fixtures.cachedThumbProfile

    let origin = LoopbackServer.fixture
    let directory: TemporaryDirectory
    let profileFile: String

    init() throws {
        directory = try TemporaryDirectory()
        profileFile = try directory.write("serve.lua", Array(Self.profile.utf8))
    }

    func start(_ arguments: [String] = []) async throws -> ServeProcess {
        try await ServeProcess(
            profileFile: profileFile, ["--allow-unsigned", "--cache-dir", directory.file("cache")] + arguments)
    }

    func url(_ service: ServeProcess, _ path: String, profile: String = "thumb") -> String {
        service.baseURL + route(path, profile: profile)
    }

    func route(_ path: String, profile: String = "thumb") -> String {
        "/unsafe/\(profile)/" + base64url(origin.url(path))
    }

    @Test func aHundredConcurrentRequestsMakeOneTransferAndOneDecode() async throws {
        origin.route("/popular.jpg", .delayed(seconds: 0.5, .ok(Fixtures.sample)))
        let service = try await start()
        let statuses = try await Curl.parallel(url(service, "/popular.jpg"), count: 100)
        #expect(statuses == Array(repeating: 200, count: 100))
        #expect(origin.requestCount("/popular.jpg") == 1)
        let metrics = try await Curl.get(service.baseURL + "/metrics").text
        #expect(metrics.contains("pipelinehost_decodes_total 1\n"), "\(metrics)")
        _ = try await service.stop()
    }

    @Test func aProgressivePhotoShrunkToAnEighthIsCountedAsADecodeThatStoppedEarly() async throws {
        origin.route("/progressive.jpg", .ok(Fixtures.quadrants(width: 2400, height: 1600, format: .progressiveJPEG)))
        let service = try await start()
        let before = try await Curl.get(service.baseURL + "/metrics").text
        #expect(before.contains("pipelinehost_jpeg_decodes_stopped_early_total 0\n"), "\(before)")
        #expect(try await Curl.get(url(service, "/progressive.jpg")).status == 200)
        let metrics = try await Curl.get(service.baseURL + "/metrics").text
        #expect(metrics.contains("pipelinehost_jpeg_decodes_stopped_early_total 1\n"), "\(metrics)")
        _ = try await service.stop()
    }

    @Test func aClientThatLeavesAbortsTheTransferWhenNobodyElseWaits() async throws {
        // Mid-transfer and never ending: only the client's leaving can stop it.
        origin.route("/slow.jpg", .stalled(Fixtures.sample, gate: "never", sent: 2048))
        let service = try await start()
        let client = try service.request(route("/slow.jpg"))
        #expect(await eventually { origin.requestCount("/slow.jpg") == 1 })
        client.close()
        #expect(await eventually { origin.abortedCount("/slow.jpg") == 1 })
        let cancelled = {
            (try? await Curl.get(service.baseURL + "/metrics").text)?.contains("pipelinehost_cancelled_total 1\n")
        }
        #expect(await eventually { await cancelled() == true })
        let outcome = try await service.stop()
        #expect(outcome.stderr.contains(" 499 "), "\(outcome.stderr)")
    }

    @Test func aClientThatLeavesCancelsOnlyItsOwnRequest() async throws {
        // Mid-transfer until the test opens the gate, once the leaving client has left.
        origin.route("/shared.jpg", .stalled(Fixtures.sample, gate: "one-left", sent: 4096))
        let service = try await start()
        async let stays = Curl.get(url(service, "/shared.jpg"))
        #expect(await eventually { origin.requestCount("/shared.jpg") == 1 })
        let leaves = try service.request(route("/shared.jpg"))
        #expect(await service.waitUntilWaiting(2), "the second client joined the first one's work")
        leaves.close()
        #expect(await eventually { service.running.outputSoFar.contains(" 499 ") }, "serve saw it leave")
        #expect(await service.waitUntilWaiting(1))
        origin.open("one-left")
        let answer = try await stays
        #expect(answer.status == 200)
        #expect(Fixtures.info(answer.body)?.width == 64)
        #expect(origin.requestCount("/shared.jpg") == 1)
        #expect(origin.abortedCount("/shared.jpg") == 0)
        _ = try await service.stop()
    }

    @Test func aFullQueueAnswers503AtOnce() async throws {
        origin.route("/held1.jpg", .held(gate: "go", .ok(Fixtures.sample)))
        origin.route("/held2.jpg", .held(gate: "go", .ok(Fixtures.sample)))
        origin.route("/other.jpg", .ok(Fixtures.sample))
        let service = try await start(["--max-queue", "2"])
        async let first = Curl.get(url(service, "/held1.jpg"))
        async let second = Curl.get(url(service, "/held2.jpg"))
        #expect(await eventually { origin.requestCount("/held1.jpg") == 1 && origin.requestCount("/held2.jpg") == 1 })
        let refused = try await Curl.get(url(service, "/other.jpg"))
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] == "1")
        #expect(refused.text.contains("\"kind\":\"queue_full\""))
        let ready = try await Curl.get(service.baseURL + "/ready")
        #expect(ready.status == 503)
        origin.open("go")
        #expect(try await first.status == 200)
        #expect(try await second.status == 200)
        #expect(try await Curl.get(url(service, "/other.jpg")).status == 200)
        _ = try await service.stop()
    }

    @Test func sigtermFinishesRequestsInProgressThenExits0() async throws {
        origin.route("/held.jpg", .held(gate: "go", .ok(Fixtures.sample)))
        let service = try await start()
        async let pending = Curl.get(url(service, "/held.jpg"))
        #expect(await eventually { origin.requestCount("/held.jpg") == 1 })
        service.running.send(SIGTERM)
        // Draining has begun, and the request in progress holds the service up: it answers it
        // only after the signal, then exits.
        #expect(await eventually { service.running.outputSoFar.contains("draining:") })
        #expect(service.running.isRunning)
        origin.open("go")
        #expect(try await pending.status == 200)
        let outcome = try await service.running.finished(timeout: 30)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        // The disk cache writes were drained: a new service answers from disk with no transfer.
        let again = try await start()
        let answer = try await Curl.get(url(again, "/held.jpg"))
        #expect(answer.status == 200 && answer.headers["x-cache"] == "disk")
        #expect(origin.requestCount("/held.jpg") == 1)
        _ = try await again.stop()
    }

    @Test func sighupWithABrokenFileKeepsServingAndAGoodOneReloads() async throws {
        origin.route("/a.jpg", .ok(Fixtures.sample))
        let service = try await start()
        try Fixtures.write(profileFile, Array("profile \"thumb\" {\n  decode { max_pixels = \"lots\" },\n}\n".utf8))
        service.running.send(SIGHUP)
        #expect(await eventually { service.running.outputSoFar.contains("reload failed") })
        #expect(service.running.outputSoFar.contains("serve.lua:2"), "\(service.running.outputSoFar)")
        #expect(try await Curl.get(url(service, "/a.jpg")).status == 200)

        try Fixtures.write(
            profileFile,
            Array(
                (Self.profile
                    + "\nprofile \"small\" {\n  fetch { block_private = false },\n  decode {},\n  downsample { size = 16 },\n  encode {},\n}\n")
                    .utf8))
        service.running.send(SIGHUP)
        #expect(await eventually { service.running.outputSoFar.contains("reloaded") })
        let small = try await Curl.get(url(service, "/a.jpg", profile: "small"))
        #expect(small.status == 200)
        #expect(Fixtures.info(small.body)?.width == 16)
        _ = try await service.stop()
    }

    @Test func signPrintsAPathTheServiceAccepts() async throws {
        origin.route("/a.jpg", .ok(Fixtures.sample))
        let keys = ["PIPELINEHOST_KEY": SigningTests.key("0a"), "PIPELINEHOST_SALT": "01020304"]
        let service = try await ServeProcess(
            profileFile: profileFile, ["--cache-dir", directory.file("cache")], environment: keys)
        let signed = try await CLIProcess.start(["sign", "thumb", origin.url("/a.jpg")], environment: keys).finished()
        #expect(signed.status == 0)
        let path = signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await Curl.get(service.baseURL + path).status == 200)
        #expect(try await Curl.get(url(service, "/a.jpg")).status == 403)
        _ = try await service.stop()
    }

    /// Past --max-connections, four spare connections (for 2) answer the operational
    /// endpoints; past those, a new connection waits in the listen backlog until one closes.
    @Test func connectionsPastTheCapAndItsSpareOnesWaitForOneToClose() async throws {
        let service = try await start(["--max-connections", "2"])
        let open = try (0..<6).map { _ in try RawConnection(port: service.port) }
        for connection in open {  // two for anything, four spare; all accepted and kept alive
            connection.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try await connection.receive(within: 60)?.hasPrefix("HTTP/1.1 200") == true)
        }
        let waiting = try RawConnection(port: service.port)
        waiting.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try await waiting.receive(within: 0.5) == nil, "not accepted while six are open")
        open[0].close()
        #expect(try await waiting.receive(within: 60)?.hasPrefix("HTTP/1.1 200") == true)
        withExtendedLifetime(open) {}
        _ = try await service.stop()
    }

    @Test func serveRefusesAWeakKeyAtStart() async throws {
        let keys = ["PIPELINEHOST_KEY": "00", "PIPELINEHOST_SALT": "00"]
        let outcome = try await CLIProcess.start(["serve", profileFile, "--port", "0"], environment: keys).finished()
        #expect(outcome.status == 2)
        #expect(outcome.stderr.contains("openssl rand -hex 32"), "\(outcome.stderr)")
    }

    @Test func serveRefusesToStartWithoutAKeyOrAllowUnsigned() async throws {
        let outcome = try await CLIProcess.start(["serve", profileFile, "--port", "0"]).finished()
        #expect(outcome.status == 2)
        #expect(outcome.stderr.contains("PIPELINEHOST_KEY"))
        #expect(outcome.stderr.contains("--allow-unsigned"))
    }
}
