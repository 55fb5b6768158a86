import HTTPTypes
import Hummingbird
import PipelineHost
import PipelineProfiles
import PipelineTesting
import TestSupport
import Testing

@testable import PipelineHostServe

/// Serve's routes over a loopback socket in this process (LiveServe), over the fake stages: no
/// libvips, no curl. What reaches the image route, what the operational endpoints answer, 405s,
/// and the status table, in milliseconds.
@Suite("serve: routes, over a loopback socket and fake stages", .needs(.network))
struct ServeRouterTests {
    let origin = FakeOrigin()

    static let profiles = """
        profile "thumb" { fetch {}, decode {}, encode {}, cache { memory = true } }
        profile "strict" { fetch {}, decode {}, encode {} }
        """
    let signer = try! URLSigner(keys: SigningTests.key("a1") + "," + SigningTests.key("33"), salts: "0f0e,1f1e")

    func service(
        allowUnsigned: Bool = true, hosts: Set<String> = [], maxQueue: Int = 256,
        requestTimeout: Duration = .seconds(ServeTestTimeouts.requestSeconds)
    ) throws -> ServeApplication {
        var settings = ServeSettings.forTest(signer: signer, allowUnsigned: allowUnsigned)
        settings.maxQueue = maxQueue
        settings.requestTimeout = requestTimeout
        settings.allowedSourceHosts = hosts
        let origin = origin
        return try ServeApplication(settings: settings) {
            try ProfileLoader(registry: FakeStages.registry(origin: origin)).load(
                code: Array(Self.profiles.utf8), name: "serve.lua")
        }
    }

    static func source(_ path: String) -> String { "http://origin.test" + path }
    static func image(_ path: String) -> String { try! ServePath.unsafe(profile: "thumb", source: source(path)) }
    func signed(_ profile: String, _ path: String) -> String {
        try! ServePath.signed(profile: profile, source: Self.source(path), signer: signer)!
    }

    @Test("health and ready answer by GET and HEAD; metrics by GET")
    func operational() async throws {
        try await LiveServe.run(service()) { client in
            for method: HTTPRequest.Method in [.get, .head] {
                try await client.execute(uri: "/health", method: method) { #expect($0.status == .ok) }
                try await client.execute(uri: "/ready", method: method) { #expect($0.status == .ok) }
            }
            try await client.execute(uri: "/health", method: .get) { #expect(String(buffer: $0.body) == "ok\n") }
            try await client.execute(uri: "/metrics", method: .get) {
                #expect($0.status == .ok)
                #expect($0.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            }
        }
    }

    @Test(
        "a method no route serves is 405 with Allow, in serve's JSON",
        arguments: [
            (HTTPRequest.Method.put, "/x"), (.delete, "/health"), (.post, "/health"), (.post, "/"),
            (.patch, Self.image("/a.jpg")),
        ])
    func methodNotAllowed(_ method: HTTPRequest.Method, _ path: String) async throws {
        try await LiveServe.run(service()) { client in
            try await client.execute(uri: path, method: method) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "GET, HEAD")
                #expect(String(buffer: response.body).contains(#""kind":"method_not_allowed""#))
            }
        }
    }

    /// A single segment is not an image path; more are read as a signature and a profile, as
    /// "/nothing/x" is. Below an endpoint ("/health/x") no route serves, and the one not-found
    /// answer says what an image path looks like.
    @Test(
        "every other GET path is an image path or not found, in serve's JSON",
        arguments: [
            ("/", 404), ("/prefetch", 404), ("/nothing", 404), ("/health/x", 404), ("/ready/x/y", 404),
            ("/metrics/x", 404),
            ("/info", 404), ("/nothing/x", 403), ("/info/nothing/x", 403),
        ])
    func imageRoute(_ path: String, _ status: Int) async throws {
        try await LiveServe.run(service()) { client in
            try await client.execute(uri: path, method: .get) { response in
                #expect(response.status.code == status)
                let kind = status == 404 ? #""kind":"not_found""# : #""kind":"forbidden","reason":"bad signature""#
                #expect(String(buffer: response.body).contains(kind))
            }
        }
    }

    @Test("an image answers its bytes, then from memory; a missing source is 404 naming it")
    func images() async throws {
        origin.serve("/a.jpg", Array("twelve bytes".utf8))
        origin.fail("/gone.jpg", with: PipelineError(.httpStatus, "HTTP 404"))
        #expect(Self.image("/a.jpg").hasPrefix("/unsafe/thumb/"))
        try await LiveServe.run(service()) { client in
            try await client.execute(uri: Self.image("/a.jpg"), method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "12x1")
            }
            try await client.execute(uri: Self.image("/a.jpg"), method: .get) { #expect($0.status == .ok) }
            #expect(origin.started("/a.jpg") == 1, "the second answer came from the cache")
            try await client.execute(uri: Self.image("/gone.jpg"), method: .get) { response in
                #expect(response.status == .badGateway || response.status == .notFound)
                #expect(String(buffer: response.body).contains("http://origin.test/gone.jpg"))
            }
        }
    }

    @Test("signatures are checked: a rotated key is accepted; any change, a wrong length, unsafe or a query is not")
    func signaturesAreChecked() async throws {
        origin.serve("/cover.jpg")
        try await LiveServe.run(service(allowUnsigned: false)) { client in
            let good = signed("thumb", "/cover.jpg")
            let (signature, rest) = try #require(ImagePath.split(Substring(good)))
            // Signed with the second (older) key of the rotation: still accepted.
            let older = try URLSigner(keys: SigningTests.key("33"), salts: "1f1e")
            let rotated = try #require(
                try ServePath.signed(profile: "thumb", source: Self.source("/cover.jpg"), signer: older))
            let accepted = try await client.execute(uri: rotated, method: .get)
            #expect(accepted.status == .ok)

            for uri in [
                "/\(signature.dropLast())\(rest)", "/\(signature)A\(rest)",
                "/\(String(repeating: "A", count: 43))\(rest)",
                "/\(String(repeating: "x", count: 5000))\(rest)", "/unsafe\(rest)", "\(good)?width=2000",
            ] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .forbidden, "\(uri.prefix(80))")
                #expect(String(buffer: response.body).contains("\"kind\":\"forbidden\""))
            }
        }
    }

    @Test("unsafe paths are accepted only with --allow-unsigned")
    func unsafeIsAcceptedOnlyWhenAllowed() async throws {
        origin.serve("/cover.jpg")
        try await LiveServe.run(service(allowUnsigned: true)) { client in
            let answer1 = try await client.execute(uri: Self.image("/cover.jpg"), method: .get)
            #expect(answer1.status == .ok)
        }
        try await LiveServe.run(service(allowUnsigned: false)) { client in
            let answer2 = try await client.execute(uri: Self.image("/cover.jpg"), method: .get)
            #expect(answer2.status == .forbidden)
        }
    }

    @Test("unknown profiles and traversal are not found")
    func unknownProfilesAndTraversalAreNotFound() async throws {
        try await LiveServe.run(service()) { client in
            for profile in ["nothere", "..", "..%2F..%2Fetc", "thumb%00", "%2e%2e"] {
                let uri = RawPath.signed(profile: profile, source: Self.source("/cover.jpg"), signer: signer)
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .notFound, "\(profile)")
                // sign makes no such path: only the name it cannot know without --file.
                if profile != "nothere" {
                    #expect(throws: ServePath.Refusal.self) {
                        try ServePath.signed(profile: profile, source: Self.source("/x.jpg"), signer: signer)
                    }
                }
            }
        }
        #expect(origin.started("/cover.jpg") == 0)
    }

    @Test("--allow-source-host restricts sources")
    func allowedSourceHostsRestrictSources() async throws {
        try await LiveServe.run(service(hosts: ["images.example.com"])) { client in
            let response = try await client.execute(uri: signed("thumb", "/cover.jpg"), method: .get)
            #expect(response.status == .forbidden)
            #expect(String(buffer: response.body).contains("allow-source-host"))
        }
        #expect(origin.started("/cover.jpg") == 0)
    }

    @Test("the metrics count what the service did, and every answer by endpoint and status")
    func metricsCount() async throws {
        origin.serve("/cover.jpg")
        try await LiveServe.run(service()) { client in
            _ = try await client.execute(uri: signed("thumb", "/cover.jpg"), method: .get)
            let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(metrics.contains("pipelinehost_requests_total 1"))
            #expect(metrics.contains("pipelinehost_decodes_total 1"))
            #expect(
                metrics.contains(#"pipelinehost_http_responses_total{endpoint="image",status="200"} 1"#), "\(metrics)")
            _ = try await client.execute(uri: "/nothing", method: .put)
            let again = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(again.contains(#"pipelinehost_http_responses_total{endpoint="none",status="405"} 1"#))
            #expect(again.contains(#"pipelinehost_http_responses_total{endpoint="metrics",status="200"} 1"#))
        }
    }

    @Test("/ready turns 503 while draining; /health stays 200")
    func readyTurns503WhileDraining() async throws {
        let service = try service()
        try await LiveServe.run(service) { client in
            service.state.startDraining()
            let answer3 = try await client.execute(uri: "/ready", method: .get)
            #expect(answer3.status == .serviceUnavailable)
            let answer4 = try await client.execute(uri: "/health", method: .get)
            #expect(answer4.status == .ok)
        }
    }

    @Test("/prefetch takes the paths that check out, runs them, and refuses the rest")
    func prefetchWarmsTheCache() async throws {
        origin.serve("/cover.jpg")
        let service = try service(allowUnsigned: false)
        try await LiveServe.run(service) { client in
            let paths = [signed("thumb", "/cover.jpg"), "/bad/thumb/aGk", signed("nothere", "/cover.jpg")]
            let body = "[" + paths.map { "\"\($0)\"" }.joined(separator: ",") + "]"
            let response = try await client.execute(uri: "/prefetch", method: .post, body: ByteBuffer(string: body))
            #expect(response.status == .accepted)
            #expect(String(buffer: response.body) == "{\"accepted\":1,\"refused\":2}\n")
            await origin.wait(for: "/cover.jpg") { $0.finished == 1 }
            await service.state.slot.now.pipeline.waitForActivity { $0.isIdle }
            let hit = try await client.execute(uri: signed("thumb", "/cover.jpg"), method: .get)
            #expect(hit.headers[HTTPField.Name("X-Cache")!] == "memory")
            let notJSON = try await client.execute(uri: "/prefetch", method: .post, body: ByteBuffer(string: "{"))
            #expect(notJSON.status == .badRequest)
        }
    }

    /// A prefetch's requests are admitted as clients' are: they fill --max-queue while they run,
    /// the ones a full queue refuses are skipped, and a client then gets the same 503.
    @Test("a prefetch counts against --max-queue, and skips what the full queue refuses")
    func aPrefetchCountsAgainstTheQueue() async throws {
        let held = (1...4).map { "/held-\($0).jpg" }
        for path in held {
            origin.serve(path)
            origin.hold(path)
        }
        origin.serve("/cover.jpg")
        let service = try service(maxQueue: 2)
        try await LiveServe.run(service) { client in
            let body = "[" + held.map { "\"\(Self.image($0))\"" }.joined(separator: ",") + "]"
            let response = try await client.execute(uri: "/prefetch", method: .post, body: ByteBuffer(string: body))
            #expect(String(buffer: response.body) == "{\"accepted\":4,\"refused\":0}\n")
            await origin.wait(for: held[0]) { $0.started == 1 }
            await origin.wait(for: held[1]) { $0.started == 1 }
            let refused = try await client.execute(uri: Self.image("/cover.jpg"), method: .get)
            #expect(refused.status == .serviceUnavailable)
            #expect(String(buffer: refused.body).contains(#""kind":"queue_full""#))
            for path in held { origin.release(path) }
            await service.state.slot.now.pipeline.waitForActivity { $0.isIdle }
            #expect(held.map { origin.started($0) } == [1, 1, 0, 0])
            // Each prefetched request gives its place back as it ends.
            #expect(await eventually { service.state.gate.count == 0 }, "every prefetched place given back")
            let served = try await client.execute(uri: Self.image("/cover.jpg"), method: .get)
            #expect(served.status == .ok)
        }
    }

    @Test("a prefetch's request is held to --request-timeout: its held transfer is cancelled", .hangLimit)
    func aPrefetchHasTheRequestDeadline() async throws {
        origin.serve("/stuck.jpg")
        origin.hold("/stuck.jpg")
        let service = try service(requestTimeout: .milliseconds(50))
        try await LiveServe.run(service) { client in
            let body = "[\"\(Self.image("/stuck.jpg"))\"]"
            _ = try await client.execute(uri: "/prefetch", method: .post, body: ByteBuffer(string: body))
            // Only the deadline lets it go: the origin holds the transfer until the test releases it.
            await origin.wait(for: "/stuck.jpg") { $0.cancelled == 1 }
            #expect(origin.finished("/stuck.jpg") == 0)
        }
    }

    /// A query is not covered by the signature, so a GET refuses it even when the signature was
    /// made over it; a prefetch of the same path must not warm what no GET can ask for.
    @Test("a prefetch path is checked exactly as its GET is")
    func aPrefetchPathIsCheckedExactlyAsItsGetIs() async throws {
        origin.serve("/cover.jpg")
        let signedPart = "/thumb/plain/" + Self.source("/cover.jpg") + "?x=1"
        let path = "/" + signer.signature(for: signedPart)! + signedPart
        try await LiveServe.run(service(allowUnsigned: false)) { client in
            let answer5 = try await client.execute(uri: path, method: .get)
            #expect(answer5.status == .forbidden)
            let response = try await client.execute(
                uri: "/prefetch", method: .post, body: ByteBuffer(string: "[\"\(path)\"]"))
            #expect(String(buffer: response.body) == "{\"accepted\":0,\"refused\":1}\n")
        }
        #expect(origin.started("/cover.jpg") == 0)
    }

    /// The queue is full once the held request's fetch has started: the next image request is
    /// 503 at once, while /health still answers.
    @Test("/health answers while the image queue is full")
    func healthAnswersWhileTheQueueIsFull() async throws {
        origin.serve("/held.jpg")
        origin.hold("/held.jpg")
        origin.serve("/cover.jpg")
        try await LiveServe.run(service(maxQueue: 1)) { client in
            let busy = Task { try await client.execute(uri: signed("thumb", "/held.jpg"), method: .get).status }
            await origin.wait(for: "/held.jpg") { $0.started == 1 }
            let refused = try await client.execute(uri: signed("thumb", "/cover.jpg"), method: .get)
            #expect(refused.status == .serviceUnavailable)
            #expect(refused.headers[.retryAfter] == "1")
            #expect(String(buffer: refused.body).contains(#""kind":"queue_full""#))
            let health = try await client.execute(uri: "/health", method: .get)
            #expect(health.status == .ok)
            origin.release("/held.jpg")
            #expect(try await busy.value == .ok)
        }
    }
}
