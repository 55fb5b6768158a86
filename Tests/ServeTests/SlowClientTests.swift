import Foundation
import TestSupport
import Testing

/// Clients that ask and never read, against the real `pipelinehost serve` process: the answers
/// they leave unread cost no memory of their own, their connections close at --send-timeout,
/// and the service keeps answering others meanwhile.
@Suite(.serialized, .needs(.pixels, .network, .process), .loopbackOrigin) struct SlowClientTests {
    /// The whole 2400×1600 sample as PNG: an answer of about 3.6 MB.
    static let profile = """
        profile "full" {
          fetch  { block_private = true, allow_loopback = true, retries = 0 },
          decode {},
          encode { format = "png", effort = 0 },  -- unfiltered: a large answer, over 3 MB
          cache  { memory = true },
        }
        """

    let origin = LoopbackServer.fixture
    let directory: TemporaryDirectory
    let profileFile: String

    init() throws {
        directory = try TemporaryDirectory()
        profileFile = try directory.write("serve.lua", Array(Self.profile.utf8))
    }

    /// Serve whose idle and request timeouts are 10 minutes, so only the send timeout or what
    /// `options` set closes a slow client.
    func slowClientService(sendTimeout: Int = 600, _ options: [String], environment: [String: String] = [:])
        async throws -> ServeProcess
    {
        let patient = [
            "--allow-unsigned", "--no-cache", "--no-access-log", "--send-timeout", "\(sendTimeout)",
            "--idle-timeout", "600", "--request-timeout", "600",
        ]
        return try await ServeProcess(profileFile: profileFile, patient + options, environment: environment)
    }

    /// Eight clients that never read hold eight answers stuck in the kernel. Nothing closes them
    /// here (every timeout is 10 minutes), so the test waits for the event, all eight stuck at
    /// once, and not for a window the clock closes.
    @Test func clientsThatNeverReadHoldNoCopyOfTheirAnswers() async throws {
        origin.route("/big.jpg", .ok(Fixtures.sample))
        // MALLOC_ARENA_MAX=2 is docs/HARDENING.md's setting for a server.
        let service = try await slowClientService(
            ["--max-connections", "12"], environment: ["MALLOC_ARENA_MAX": "2"])
        let path = "/unsafe/full/" + base64url(origin.url("/big.jpg"))
        let first = try await Curl.get(service.baseURL + path)
        #expect(first.status == 200)
        let answerBytes = first.body.count
        #expect(answerBytes > 3_000_000)
        let before = try #require(ProcFacts.residentBytes(service.running.pid))

        var readers = try (0..<8).map { _ in try SlowReader(port: service.port) }
        for reader in readers { reader.pipeline(path, count: 50) }
        // Every connection's answer gets stuck in the kernel: its client takes no more. The
        // service's largest resident set meanwhile is kept.
        var held = before
        let stuck = await eventually {
            held = max(held, ProcFacts.residentBytes(service.running.pid) ?? 0)
            return ProcFacts.sendQueues(localPort: service.port).filter { $0 > 0 }.count == readers.count
        }
        #expect(stuck, "send queues: \(ProcFacts.sendQueues(localPort: service.port))")
        held = max(held, ProcFacts.residentBytes(service.running.pid) ?? 0)
        // The operational endpoints answer while they are held.
        let health = try await Curl.get(service.baseURL + "/health", maxTime: 30)
        #expect(health.status == 200)
        // What grows is the pieces on their way to the kernel's send buffers, which took about
        // 2.8 MB of each answer: bounded by those buffers, not by the answers. A copy of each
        // answer per connection, as before, was 8 × 3.6 MB on top of that. The largest resident
        // set counts the decodes' passing memory too: 14 to 16 MB of growth in all on an idle
        // machine, 34 MB once with a dozen suites running beside it, where a copy per connection
        // adds 8 answers (33 MB) to whichever: the bound is ten answers, between the two.
        #expect(
            held - before < (readers.count + 2) * answerBytes,
            "RSS grew \(held - before) bytes with 8 unread \(answerBytes)-byte answers")
        readers.removeAll()  // their sockets close with unread data: a reset, so serve can stop
        _ = try await service.stop()
    }

    /// The same clients, with --send-timeout 15: each is reset once its answer made no progress
    /// for 15 s, and counted (nothing else would close it: the idle and request timeouts are
    /// 10 minutes).
    @Test func clientsThatNeverReadAreClosedAtTheSendTimeout() async throws {
        origin.route("/timeout.jpg", .ok(Fixtures.sample))
        let service = try await slowClientService(sendTimeout: 15, ["--max-connections", "12"])
        let path = "/unsafe/full/" + base64url(origin.url("/timeout.jpg"))
        let readers = try (0..<8).map { _ in try SlowReader(port: service.port) }
        for reader in readers { reader.pipeline(path, count: 50) }
        for reader in readers {
            #expect(try await reader.closedByServer(within: 300))
        }
        #expect(await eventually { ProcFacts.sendQueues(localPort: service.port).isEmpty })
        #expect(await service.metric("pipelinehost_http_send_timeouts_total") == 8)
        _ = try await service.stop()
    }

    /// Clients that take their answers a few KB a second never trip --send-timeout: they are
    /// reset by the minimum send rate, counted, and while they hold every connection slot the
    /// operational endpoints still answer on a spare one, which answers nothing else.
    @Test func tricklingReadersAreResetAndHealthAnswersWhileTheyHoldEverySlot() async throws {
        origin.route("/trickle.jpg", .ok(Fixtures.sample))
        let service = try await slowClientService(["--max-connections", "4", "--min-send-rate", "64K"])
        let path = "/unsafe/full/" + base64url(origin.url("/trickle.jpg"))
        let readers = try (0..<4).map { _ in try SlowReader(port: service.port) }
        for reader in readers { reader.pipeline(path, count: 1) }
        // Every slot is taken once each reader's answer is stuck in the kernel. They take nothing
        // yet, which the rate does not judge (that is the send timeout's, 10 minutes here), so
        // they stay stuck until the test has seen what it needs.
        #expect(
            await eventually {
                ProcFacts.sendQueues(localPort: service.port).filter { $0 > 0 }.count == readers.count
            })
        let health = try await Curl.get(service.baseURL + "/health", maxTime: 60)
        #expect(health.status == 200)
        let image = try await Curl.get(service.baseURL + path, maxTime: 60)
        #expect(image.status == 503, "\(image.status): \(image.text)")
        #expect(image.text.contains(#""kind":"connections_full""#))
        #expect(image.headers["retry-after"] == "1")
        // Now they trickle: nothing but the rate closes them, every other limit is 10 minutes.
        for reader in readers { reader.trickle(bytes: 1024, perSecond: 2) }
        for reader in readers {
            #expect(try await reader.closedByServer(within: 300))
        }
        #expect(await service.metric("pipelinehost_http_slow_sends_total") == 4)
        #expect(await service.metric("pipelinehost_http_send_timeouts_total") == 0)
        _ = try await service.stop()
    }

    @Test func anHTTP10RequestWithoutKeepAliveIsClosedAfterItsAnswer() async throws {
        let service = try await ServeProcess(profileFile: profileFile, ["--allow-unsigned", "--idle-timeout", "600"])
        let connection = try RawConnection(port: service.port)
        connection.send("GET /health HTTP/1.0\r\n\r\n")
        // Closed by the server, not at the 10-minute idle timeout.
        let (received, closed) = try await connection.receiveUntilClosed(within: 60)
        #expect(closed)
        #expect(received.hasPrefix("HTTP/1.0 200") || received.hasPrefix("HTTP/1.1 200"), "\(received)")
        #expect(received.lowercased().contains("connection: close"), "\(received)")
        #expect(received.hasSuffix("ok\n"))

        // Keep-alive asked for is kept; Connection: close on 1.1 closes.
        let kept = try RawConnection(port: service.port)
        kept.send("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try await kept.receive(within: 60)?.contains("ok\n") == true)
        kept.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let (rest, keptClosed) = try await kept.receiveUntilClosed(within: 60)
        #expect(keptClosed)
        #expect(rest.contains("ok\n"), "\(rest)")
        _ = try await service.stop()
    }

    /// Pipelined requests are answered in order, each one up to and including the one that says
    /// Connection: close; the connection closes after that answer, and a request after it is
    /// not answered.
    @Test func pipelinedRequestsAreAnsweredUpToTheOneThatCloses() async throws {
        let service = try await ServeProcess(profileFile: profileFile, ["--allow-unsigned", "--idle-timeout", "600"])
        for closing in [1, 2, 3] {
            let connection = try RawConnection(port: service.port)
            let heads = (1...4).map { index in
                "GET /health HTTP/1.1\r\nHost: x\r\n" + (index == closing ? "Connection: close\r\n" : "") + "\r\n"
            }
            connection.send(heads.joined())
            let (answers, closed) = try await connection.receiveUntilClosed(within: 60)
            #expect(closed, "closing at \(closing): \(answers)")
            #expect(answers.components(separatedBy: "HTTP/1.1 200 ").count - 1 == closing, "\(closing): \(answers)")
            #expect(answers.hasSuffix("ok\n"), "\(answers)")
        }
        _ = try await service.stop()
    }

    @Test(
        "a body in a transfer coding other than chunked is 501 and closes its connection",
        arguments: [("xchunked", 501), ("gzip, chunked", 501), ("identity", 501), ("chunked, gzip", 400)])
    func unknownTransferCodingIs501(_ coding: String, _ status: Int) async throws {
        let service = try await ServeProcess(profileFile: profileFile, ["--allow-unsigned", "--idle-timeout", "600"])
        let connection = try RawConnection(port: service.port)
        connection.send("POST /prefetch HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \(coding)\r\n\r\n[]")
        let (answer, closed) = try await connection.receiveUntilClosed(within: 60)
        // Refused at once (501), or by NIO's decoder when chunked is not the last coding (400):
        // never read as a body to the close, which /prefetch's size limit answered 413.
        #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(coding): \(answer)")
        #expect(closed, "\(coding)")
        _ = try await service.stop()
    }
}
