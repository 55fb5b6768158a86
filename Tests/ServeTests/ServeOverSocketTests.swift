import HTTPTypes
import Hummingbird
import PipelineHost
import TestSupport
import Testing

@testable import PipelineHostServe

/// The service in this process, over a real socket (LiveServe), in front of
/// the loopback origin: routing, signing, the status table, 304, HEAD and Vary.
@Suite(.needs(.pixels, .network), .loopbackOrigin) struct ServeOverSocketTests {
    static let profiles = """
        profile "thumb" {
          fetch      { block_private = true, allow_loopback = true, timeout = 1, retries = 0 },
          decode     {},
          downsample { size = 64, fit = "cover" },
          encode     { format = "jpeg" },
          cache      { memory = true },
        }
        profile "auto" {
          fetch      { block_private = true, allow_loopback = true, retries = 0 },
          decode     {},
          downsample { size = 32 },
          encode     { format = "auto" },
        }
        profile "untimed" {
          fetch      { block_private = true, allow_loopback = true, retries = 0, timeout = 600, low_speed_limit = 0 },
          decode     {},
          encode     { format = "jpeg" },
        }
        profile "strict" {
          fetch      { retries = 0 },
          decode     {},
          encode     {},
        }
        """

    let origin = LoopbackServer.fixture
    let signer = try! URLSigner(keys: SigningTests.key("a1") + "," + SigningTests.key("33"), salts: "0f0e,1f1e")

    init() throws {
        origin.route("/cover.jpg", .ok(Fixtures.quadrants(width: 200, height: 120)))
        origin.route(
            "/pan.gif", .ok(Fixtures.photoPan(frames: 6, width: 96, height: 64, step: 24), contentType: "image/gif"))
        origin.route("/gone.jpg", .status(404))
        origin.route("/broken.jpg", .status(500))
        origin.route("/page.jpg", .ok(Array("<!doctype html><html>hi</html>".utf8), contentType: "text/html"))
        // Never answered: only the fetch timeout ends it, however slow the machine.
        origin.route("/slow.jpg", .held(gate: "never", .ok(Fixtures.sample)))
    }

    func service(
        allowUnsigned: Bool = false, hosts: Set<String> = [], maxQueue: Int = 256,
        requestTimeout: Duration = .seconds(ServeTestTimeouts.requestSeconds),
        headTimeout: Duration = .seconds(ServeTestTimeouts.connectionSeconds),
        idleTimeout: Duration = .seconds(ServeTestTimeouts.connectionSeconds), maxConnections: Int = 4096
    ) throws -> ServeApplication {
        var settings = ServeSettings.forTest(signer: signer, allowUnsigned: allowUnsigned)
        settings.maxQueue = maxQueue
        settings.requestTimeout = requestTimeout
        settings.headTimeout = headTimeout
        settings.idleTimeout = idleTimeout
        settings.maxConnections = maxConnections
        settings.allowedSourceHosts = hosts
        return try ServeApplication(settings: settings) { try TestPipeline.load(Self.profiles, name: "serve.lua") }
    }

    func signed(_ profile: String, _ path: String, plain: Bool = false) -> String {
        try! ServePath.signed(profile: profile, source: origin.url(path), plain: plain, signer: signer)!
    }

    @Test func aSignedPathAnswersTheImageWithItsHeaders() async throws {
        try await LiveServe.run(service()) { client in
            let response = try await client.execute(uri: signed("thumb", "/cover.jpg"), method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "image/jpeg")
            #expect(response.headers[.contentLength] == String(response.body.readableBytes))
            #expect(Fixtures.info(Array(response.body.readableBytesView))?.width == 64)
            let tag = try #require(response.headers[.eTag])
            #expect(tag.hasPrefix("\"") && !tag.hasPrefix("W/"))
            #expect(response.headers[.cacheControl]?.hasPrefix("public, max-age=") == true)
            #expect(response.headers[.vary] == nil)

            // The same bytes again, from memory, and the same validator; If-None-Match is a 304.
            let again = try await client.execute(uri: signed("thumb", "/cover.jpg", plain: true), method: .get)
            #expect(again.headers[.eTag] == tag)
            #expect(again.headers[HTTPField.Name("X-Cache")!] == "memory")
            let revalidated = try await client.execute(
                uri: signed("thumb", "/cover.jpg"), method: .get,
                headers: [.ifNoneMatch: tag])
            #expect(revalidated.status == .notModified)
            #expect(revalidated.body.readableBytes == 0)
            #expect(origin.requestCount("/cover.jpg") == 1)
        }
    }

    @Test func headAnswersTheHeadersWithoutTheBody() async throws {
        try await LiveServe.run(service()) { client in
            let get = try await client.execute(uri: signed("thumb", "/cover.jpg"), method: .get)
            let head = try await client.execute(uri: signed("thumb", "/cover.jpg"), method: .head)
            #expect(head.status == .ok)
            #expect(head.body.readableBytes == 0)
            #expect(head.headers[.contentLength] == String(get.body.readableBytes))
            #expect(head.headers[.eTag] == get.headers[.eTag])
        }
    }

    @Test func autoFormatFollowsAcceptAndVaries() async throws {
        try await LiveServe.run(service()) { client in
            let webp = try await client.execute(
                uri: signed("auto", "/cover.jpg"), method: .get,
                headers: [.accept: "image/webp,*/*;q=0.8"])
            #expect(webp.headers[.contentType] == "image/webp")
            #expect(webp.headers[.vary] == "Accept")
            #expect(Array(webp.body.readableBytesView.prefix(4)) == Array("RIFF".utf8))
            let jpeg = try await client.execute(
                uri: signed("auto", "/cover.jpg"), method: .get, headers: [.accept: "*/*"])
            #expect(jpeg.headers[.contentType] == "image/jpeg")
            #expect(jpeg.headers[.eTag] != webp.headers[.eTag])
            #expect(jpeg.headers[.vary] == "Accept")
        }
    }

    @Test func autoFormatKeepsAnimationsAnimated() async throws {
        try await LiveServe.run(service()) { client in
            let webp = try await client.execute(
                uri: signed("auto", "/pan.gif"), method: .get, headers: [.accept: "image/avif,image/webp,*/*"])
            #expect(webp.headers[.contentType] == "image/webp" && webp.headers[.vary] == "Accept")
            #expect(Fixtures.info(Array(webp.body.readableBytesView))?.pages == 6)
            let gif = try await client.execute(uri: signed("auto", "/pan.gif"), method: .get, headers: [.accept: "*/*"])
            #expect(gif.headers[.contentType] == "image/gif" && gif.headers[.vary] == "Accept")
            #expect(Fixtures.info(Array(gif.body.readableBytesView))?.pages == 6, "never a JPEG of frame one")
            #expect(gif.headers[.eTag] != webp.headers[.eTag])
        }
    }

    @Test(arguments: [
        ("/gone.jpg", 404, "not_found"), ("/broken.jpg", 502, "http_status"), ("/page.jpg", 422, "not_an_image"),
        ("/slow.jpg", 504, "timeout"),
    ])
    func failuresAnswerTheirStatusAndARedactedJSONBody(path: String, status: Int, kind: String) async throws {
        try await LiveServe.run(service()) { client in
            let source = origin.url(path) + "?u=ann&p=secret"
            let uri = try #require(try ServePath.signed(profile: "thumb", source: source, signer: signer))
            let response = try await client.execute(uri: uri, method: .get)
            #expect(response.status.code == status)
            #expect(response.headers[.contentType] == "application/json")
            let body = String(buffer: response.body)
            #expect(body.contains("\"kind\":\"\(kind)\""), "\(body)")
            #expect(!body.contains("secret"), "\(body)")
            if path == "/broken.jpg" { #expect(body.contains("\"upstream_status\":500")) }
        }
    }

    @Test func hostileSourcesAreBlockedBeforeAnyTransfer() async throws {
        try await LiveServe.run(service()) { client in
            let sources = [
                "file:///etc/passwd", "/etc/passwd", "FILE:///etc/passwd", "gopher://127.0.0.1/x",
                "http://169.254.169.254/latest/meta-data/", "http://10.1.2.3/a.jpg", "http://[::1]:1/a.jpg",
            ]
            for source in sources {
                let uri = try #require(try ServePath.signed(profile: "strict", source: source, signer: signer))
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .forbidden, "\(source): \(String(buffer: response.body))")
                #expect(!String(buffer: response.body).contains("root:"))
            }
            // The strict profile did not turn block_private off, so loopback is refused too.
            let loop = try await client.execute(uri: signed("strict", "/cover.jpg"), method: .get)
            #expect(loop.status == .forbidden)
            #expect(origin.requestCount("/cover.jpg") == 0)
        }
    }

    /// One parse decides the policy, the key and the transfer: a source two readers could read
    /// differently is a 400 before anything runs, and never lands under another host's key.
    @Test func ambiguousSourcesAreRefusedBeforeAnyTransfer() async throws {
        let attacker = try LoopbackServer()
        attacker.route("/x://127.0.0.1:\(origin.port)/cover.jpg", .ok(Fixtures.quadrants(width: 32, height: 32)))
        try await LiveServe.run(service()) { client in
            for source in [
                "http:/127.0.0.1:\(attacker.port)/x://127.0.0.1:\(origin.port)/cover.jpg",
                "http:///127.0.0.1:\(attacker.port)/cover.jpg",
                "http://127.0.0.1:\(origin.port)\\@127.0.0.1:\(attacker.port)/",
                "http://127.1:\(attacker.port)/cover.jpg", "http://127.0.0.1:\(origin.port)/cover.jpg\u{0}",
            ] {
                let uri = try #require(try ServePath.signed(profile: "thumb", source: source, signer: signer))
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .badRequest, "\(source): \(String(buffer: response.body))")
                #expect(String(buffer: response.body).contains("ambiguous source"))
            }
            let honest = try await client.execute(uri: signed("thumb", "/cover.jpg"), method: .get)
            #expect(Fixtures.info(Array(honest.body.readableBytesView))?.width == 64)
            #expect(honest.headers[HTTPField.Name("X-Cache")!] == "miss")
            #expect(attacker.requestLog.isEmpty)
        }
    }

    @Test func allowedSourceHostsHoldRedirectsToo() async throws {
        origin.route("/elsewhere.jpg", .redirect(to: origin.url("/cover.jpg")))  // localhost to 127.0.0.1
        try await LiveServe.run(service(hosts: ["localhost"])) { client in
            let source = "http://localhost:\(origin.port)/elsewhere.jpg"
            let uri = try #require(try ServePath.signed(profile: "thumb", source: source, signer: signer))
            let response = try await client.execute(uri: uri, method: .get)
            #expect(response.status == .forbidden, "\(String(buffer: response.body))")
            #expect(String(buffer: response.body).contains("allow_hosts"))
            #expect(origin.requestCount("/cover.jpg") == 0)
        }
    }

    /// No request holds the service past --request-timeout: it is answered 504, and its work
    /// stops (its only request left): a transfer under way is cut, and none starts after.
    @Test func aRequestPastItsTimeBudgetIs504AndItsWorkStops() async throws {
        // A transfer that never ends, under a profile whose fetch outlasts the test (no low-speed
        // limit, 10 minutes): only the request's time budget can stop it.
        origin.route("/dripping.jpg", .stalled(Fixtures.sample, gate: "never"))
        let service = try service(requestTimeout: .milliseconds(500))
        try await LiveServe.run(service) { client in
            let response = try await client.execute(uri: signed("untimed", "/dripping.jpg"), method: .get)
            #expect(response.status == .gatewayTimeout, "\(String(buffer: response.body))")
            #expect(String(buffer: response.body).contains(#""kind":"timeout""#))
            // Events, not the clock: once the pipeline is idle no transfer runs or can start, so
            // every one that started was cut. (On an idle machine the transfer is under way
            // long before the budget ends; on a busy one the budget may end first, and then
            // no transfer ever starts.)
            let pipeline = service.state.slot.now.pipeline
            #expect(await eventually { await pipeline.activity().isIdle }, "the transfer was never stopped")
            #expect(
                await eventually { origin.abortedCount("/dripping.jpg") == origin.requestCount("/dripping.jpg") },
                "transfers started \(origin.requestCount("/dripping.jpg")), cut \(origin.abortedCount("/dripping.jpg"))"
            )
        }
    }

    /// A connection that sends nothing, or trickles its head, is closed at --head-timeout (the
    /// trickle's bytes do not reset it); an idle keep-alive connection at --idle-timeout.
    @Test func connectionsThatNeverFinishARequestAreClosed() async throws {
        try await LiveServe.run(service(headTimeout: .milliseconds(300))) { client in
            let port = client.port
            let silent = try RawConnection(port: port)
            #expect(try await silent.receive(within: 60) == "", "closed without a request")
            let trickle = try RawConnection(port: port)
            trickle.send("GET /health HTTP/1.1\r\n")
            let dripping = Task {
                for index in 0..<600 where !Task.isCancelled {
                    trickle.send("X-Drip-\(index): a\r\n")
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
            #expect(try await trickle.receive(within: 60) == "", "a head that never ends is cut")
            dripping.cancel()
        }
        try await LiveServe.run(service(idleTimeout: .milliseconds(300))) { client in
            let keptAlive = try RawConnection(port: client.port)
            keptAlive.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try await keptAlive.receive(within: 60)?.hasPrefix("HTTP/1.1 200") == true)
            #expect(try await keptAlive.receive(within: 60) == "", "an idle keep-alive connection is closed")
        }
    }
}
