import FetchPlugin
import PipelineHost
import PipelineHostTransfer
import TestSupport
import Testing

@Suite("fetch limits: low speed, schemes, block_private", .needs(.pixels, .network), .loopbackOrigin)
struct FetchLimitTests {
    let server = LoopbackServer.fixture
    let jpeg = Fixtures.quadrants(width: 64, height: 48)

    init() throws {
        server.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
    }

    @Test("a server that drips slower than low_speed_limit times out")
    func lowSpeed() async throws {
        // A few bytes, then nothing: slower than any low_speed_limit, whatever the machine.
        server.route("/drip", .stalled([UInt8](repeating: 1, count: 200), gate: "never", sent: 10))
        let error = try await TestPipeline.failure(
            fetchOnly("low_speed_limit = 100, low_speed_time = 1"),
            source: server.url("/drip"))
        #expect(error?.kind == .timeout)
        #expect(error?.reason.contains("Operation too slow") == true, "\(String(describing: error))")
    }

    @Test("schemes limits what a source may be")
    func schemes() async throws {
        let webOnly = fetchOnly(#"schemes = { "https" }"#)
        let http = try await TestPipeline.failure(webOnly, source: server.url("/photo.jpg"))
        #expect(http?.kind == .invalidSource)
        #expect(http?.reason == "scheme 'http' is not allowed (fetch schemes: https)")
        let path = try await TestPipeline.failure(webOnly, source: "/etc/passwd")
        #expect(path?.reason == "local files are not allowed (fetch schemes: https)")
        #expect(server.requestCount("/photo.jpg") == 0)
        #expect(throws: ProfileError.self) { try TestPipeline.load(fetchOnly(#"schemes = { "gopher" }"#)) }
    }

    @Test("block_private refuses loopback by address and by name, before any request")
    func blockLoopback() async throws {
        for host in ["127.0.0.1", "localhost"] {
            let url = "http://\(host):\(server.port)/photo.jpg"
            let error = try await TestPipeline.failure(fetchOnly("block_private = true"), source: url)
            #expect(error?.kind == .blocked, "\(host)")
            #expect(error?.reason.hasSuffix("(loopback): block_private is on") == true, "\(String(describing: error))")
        }
        #expect(server.requestCount("/photo.jpg") == 0)
        #expect(server.connectionCount == 0)
    }

    @Test("a connection opened without the check is not reused under block_private")
    func noReuse() async throws {
        let set = try TestPipeline.load(
            """
            profile "open" { fetch {} }
            profile "guarded" { fetch { block_private = true } }
            """)
        let pipeline = Pipeline(profiles: set)
        _ = try await pipeline.image(for: ImageRequest(source: server.url("/photo.jpg"), profile: "open"))
        await #expect(throws: PipelineError.self) {
            try await pipeline.image(for: ImageRequest(source: server.url("/photo.jpg"), profile: "guarded"))
        }
        #expect(server.requestCount("/photo.jpg") == 1)
    }

    @Test(
        "a redirect to a private or metadata address is refused at connect time",
        arguments: [
            ("http://10.255.255.1/a.jpg", "10.255.255.1 (private)"),
            ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 (link-local)"),
            ("http://[::ffff:192.168.1.1]/a.jpg", "::ffff:192.168.1.1 (private)"),
        ])
    func blockRedirect(_ target: String, _ refused: String) async throws {
        server.route("/hop", .redirect(to: target))
        let error = try await TestPipeline.failure(
            fetchOnly("block_private = true, allow_loopback = true"),
            source: server.url("/hop"))
        #expect(error?.kind == .blocked)
        #expect(error?.reason == "refused to connect to \(refused): block_private is on")
        #expect(server.requestCount("/hop") == 1)
    }

    @Test(
        "address classes",
        arguments: [
            ("127.0.0.1", "loopback"), ("::1", "loopback"), ("10.1.2.3", "private"), ("172.16.0.1", "private"),
            ("172.32.0.1", nil), ("192.168.0.1", "private"), ("169.254.169.254", "link-local"),
            ("fe80::1", "link-local"),
            ("fd00:ec2::254", "private"), ("100.64.0.1", "shared (carrier-grade NAT)"), ("0.0.0.0", "unspecified"),
            ("::", "unspecified"), ("224.0.0.1", "multicast"), ("255.255.255.255", "reserved"),
            ("::ffff:127.0.0.1", "loopback"),
            ("64:ff9b::a00:1", "private"), ("8.8.8.8", nil), ("2606:4700::1111", nil), ("93.184.216.34", nil),
        ] as [(String, String?)])
    func addressClass(_ address: String, _ expected: String?) {
        #expect(FetchPlugin.blockedAddressClass(address) == expected)
    }
}

@Suite("fetch retries", .needs(.pixels, .network), .loopbackOrigin)
struct FetchRetryTests {
    let server = LoopbackServer.fixture
    let jpeg = Fixtures.quadrants(width: 64, height: 48)
    let quick = "retry_delay = 0.01"

    @Test("5xx and 429 are retried until one succeeds", arguments: [500, 502, 503, 429])
    func transient(_ status: Int) async throws {
        server.route("/flaky", .sequence([.status(status), .status(status), .ok(jpeg)]))
        let result = try await TestPipeline.run(fetchOnly(quick), source: server.url("/flaky"))
        #expect(firstDifference(result.bytes, jpeg) == nil)
        #expect(server.requestCount("/flaky") == 3)
    }

    @Test("4xx is never retried", arguments: [400, 401, 403, 404, 410])
    func permanent(_ status: Int) async throws {
        server.route("/no", .sequence([.status(status), .ok(jpeg)]))
        let error = try await TestPipeline.failure(fetchOnly(quick), source: server.url("/no"))
        #expect(error?.httpStatus == status)
        #expect(server.requestCount("/no") == 1)
    }

    @Test("retries stop after `retries` extra attempts, and the error says how many")
    func exhausted() async throws {
        server.route("/down", .status(500))
        let error = try await TestPipeline.failure(fetchOnly(quick + ", retries = 3"), source: server.url("/down"))
        #expect(error?.reason == "HTTP 500 (after 4 attempts)")
        #expect(server.requestCount("/down") == 4)
    }

    @Test("a dropped connection is retried")
    func dropped() async throws {
        server.route("/cut", .sequence([.hangUp, .truncated(Array(jpeg.prefix(100)), missing: 500), .ok(jpeg)]))
        let result = try await TestPipeline.run(fetchOnly(quick), source: server.url("/cut"))
        #expect(firstDifference(result.bytes, jpeg) == nil)
        #expect(server.requestCount("/cut") == 3)
    }

    @Test("Retry-After is honoured, and one longer than retry_max_delay is not waited for")
    func retryAfter() async throws {
        server.route("/busy", .sequence([.headers(["Retry-After": "1"], .status(503)), .ok(jpeg)]))
        let result = try await TestPipeline.run(fetchOnly(quick), source: server.url("/busy"))
        #expect(firstDifference(result.bytes, jpeg) == nil)
        #expect(server.requestCount("/busy") == 2)

        server.route("/later", .headers(["Retry-After": "3600"], .status(429)))
        let error = try await TestPipeline.failure(fetchOnly(quick), source: server.url("/later"))
        #expect(error?.retryAfter == 3600)
        #expect(error?.reason == "HTTP 429 (Retry-After 3600 s is longer than retry_max_delay 10 s)")
        #expect(server.requestCount("/later") == 1)
        // Without retries there is nothing to wait for, and the reason says nothing about it.
        let once = try await TestPipeline.failure(fetchOnly(quick + ", retries = 0"), source: server.url("/later"))
        #expect(once?.reason == "HTTP 429" && once?.retryAfter == 3600)
    }

    @Test("a failed URL is asked again by the next request")
    func notRemembered() async throws {
        server.route("/once", .sequence([.status(404), .ok(jpeg)]))
        let set = try TestPipeline.load(fetchOnly(quick))
        let pipeline = Pipeline(profiles: set)
        let request = ImageRequest(source: server.url("/once"), profile: "raw")
        await #expect(throws: PipelineError.self) { try await pipeline.image(for: request) }
        #expect(firstDifference(try await pipeline.image(for: request).bytes, jpeg) == nil)
    }

    @Test("cancelling during a backoff wait ends the request at once")
    func cancelDuringBackoff() async throws {
        server.route("/wait", .status(503))
        let set = try TestPipeline.load(fetchOnly("retry_delay = 60, retry_max_delay = 60"))
        let pipeline = Pipeline(profiles: set)
        let task = Task { try await pipeline.image(for: ImageRequest(source: server.url("/wait"), profile: "raw")) }
        #expect(await eventually { server.requestCount("/wait") == 1 })
        task.cancel()
        let outcome = await task.result
        guard case .failure(let error as PipelineError) = outcome else {
            Issue.record("expected a cancellation, got \(outcome)")
            return
        }
        #expect(error.kind == .cancelled)
        #expect(server.requestCount("/wait") == 1)
    }
}
