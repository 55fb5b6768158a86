import Foundation
import HTTPTypes
import Hummingbird
import PipelineHost
import TestSupport
import Testing

@testable import PipelineHostServe

/// Option segments in serve's paths: `/{signature}/resize/w:600/q:60/{source}`, chosen among the
/// values the profile's `params` allows, on real stages in front of the loopback origin.
@Suite("serve: bounded URL options", .needs(.pixels, .network), .loopbackOrigin)
struct ServeOptionTests {
    static let profiles = """
        profile "resize" {
          params     { w = { 100, 300, 600, default = 300 }, q = { 60, 80, default = 80 }, dpr = { 1, 2, 3, hint = "DPR" } },
          fetch      { block_private = true, allow_loopback = true, timeout = 120, low_speed_time = 120, retries = 0 },
          decode     {},
          downsample { width = param "w", dpr = param "dpr" },
          encode     { format = "jpeg", quality = param "q" },
          cache      { memory = true },
        }
        profile "formats" {
          params     { f = { "auto", "png", "webp", default = "auto" } },
          fetch      { block_private = true, allow_loopback = true, timeout = 120, low_speed_time = 120, retries = 0 },
          decode     {},
          downsample { size = 64 },
          encode     { format = param "f" },
        }
        """

    let origin = LoopbackServer.fixture
    let signer = try! URLSigner(keys: SigningTests.key("a1"), salts: "0f0e")

    init() {
        origin.route("/opt/wide.jpg", .ok(Fixtures.quadrants(width: 1200, height: 600)))
        origin.route("/opt/held.jpg", .held(gate: "opt-held", .ok(Fixtures.quadrants(width: 1200, height: 600))))
        origin.route("/opt/prefetched.jpg", .ok(Fixtures.quadrants(width: 1200, height: 600)))
    }

    func service(acceptClientHints: Bool = false) throws -> ServeApplication {
        var settings = ServeSettings.forTest(signer: signer)
        settings.acceptClientHints = acceptClientHints
        return try ServeApplication(settings: settings) { try TestPipeline.load(Self.profiles, name: "serve.lua") }
    }

    func signed(_ path: String, _ options: [(String, String)], plain: Bool = false, profile: String = "resize")
        -> String
    {
        try! ServePath.signed(
            profile: profile, source: origin.url(path), plain: plain, options: options, signer: signer)!
    }

    static let xCache = HTTPField.Name("X-Cache")!

    func width(_ response: LiveServe.Response) -> Int? { Fixtures.info(Array(response.body.readableBytesView))?.width }

    @Test("an option segment chooses the value; a missing one takes the default; order does not matter")
    func choose() async throws {
        try await LiveServe.run(service()) { client in
            let wide = try await client.execute(
                uri: signed("/opt/wide.jpg", [("w", "600"), ("q", "60")]), method: .get)
            #expect(wide.status == .ok && width(wide) == 600)
            let swapped = try await client.execute(
                uri: signed("/opt/wide.jpg", [("q", "60"), ("w", "600")]), method: .get)
            #expect(swapped.headers[Self.xCache] == "memory")
            #expect(swapped.headers[.eTag] == wide.headers[.eTag])
            let plain = try await client.execute(
                uri: signed("/opt/wide.jpg", [("w", "100")], plain: true), method: .get)
            #expect(width(plain) == 100)
            // No segment is the default, and the default written out is the same variant.
            let none = try await client.execute(uri: signed("/opt/wide.jpg", []), method: .get)
            #expect(width(none) == 300)
            let written = try await client.execute(
                uri: signed("/opt/wide.jpg", [("w", "300"), ("q", "80")]), method: .get)
            #expect(written.headers[Self.xCache] == "memory" && written.headers[.eTag] == none.headers[.eTag])
        }
    }

    @Test(
        "an unknown option, a value outside the set, a repeat or a malformed segment is 400 naming the allowed values",
        arguments: [
            ([("w", "700")], "w:700 is not allowed; w takes 100, 300, 600"),
            ([("w", "0600")], "w:0600 is not allowed; w takes 100, 300, 600"),
            ([("width", "600")], "unknown option \\\"width\\\"; profile \\\"resize\\\" takes dpr, q, w"),
            ([("w", "100"), ("w", "600")], "option w is given twice"),
            ([("w", "")], "option segment \\\"w:\\\" is not name:value"),
            ([("", "600")], "option segment \\\":600\\\" is not name:value"),
        ])
    func refusals(_ options: [(String, String)], _ reason: String) async throws {
        try await LiveServe.run(service()) { client in
            let response = try await client.execute(
                uri: RawPath.signed(
                    profile: "resize", source: origin.url("/opt/wide.jpg"), options: options, signer: signer),
                method: .get)
            #expect(response.status == .badRequest)
            let body = String(buffer: response.body)
            #expect(body.contains("\"kind\":\"invalid_option\"") && body.contains(reason), "\(body)")
        }
    }

    @Test("the signature covers the options: a changed option is 403")
    func signatureCoversOptions() async throws {
        try await LiveServe.run(service()) { client in
            let path = signed("/opt/wide.jpg", [("w", "100")])
            let changed = path.replacingOccurrences(of: "/w:100/", with: "/w:600/")
            #expect(changed != path)
            let response = try await client.execute(uri: changed, method: .get)
            #expect(response.status == .forbidden)
        }
    }

    @Test("three widths of one source make one transfer and one decode")
    func widthsShareTheirPrefix() async throws {
        let service = try service()
        try await LiveServe.run(service) { client in
            async let small = client.execute(uri: signed("/opt/held.jpg", [("w", "100")]), method: .get)
            async let medium = client.execute(uri: signed("/opt/held.jpg", [("w", "300")]), method: .get)
            async let large = client.execute(uri: signed("/opt/held.jpg", [("w", "600")]), method: .get)
            let pipeline = service.state.slot.now.pipeline
            await pipeline.waitForActivity { $0.waitingRequests == 3 }
            origin.open("opt-held")
            let widths = try await [small, medium, large].map { width($0) }
            #expect(widths == [100, 300, 600])
            #expect(origin.requestCount("/opt/held.jpg") == 1)
            // Bytes were decoded once; each width's downsample started from that one decode.
            let stats = await pipeline.stats()
            #expect(stats.fetches == 1 && stats.decodes == 1)
        }
    }

    @Test("a client hint chooses the nearest allowed value at or above it, and the answer varies by it")
    func clientHints() async throws {
        try await LiveServe.run(service(acceptClientHints: true)) { client in
            let path = signed("/opt/wide.jpg", [("w", "100")])
            let hinted = try await client.execute(
                uri: path, method: .get, headers: [HTTPField.Name("Sec-CH-DPR")!: "1.4"])
            #expect(width(hinted) == 200)
            #expect(hinted.headers[.vary] == "Sec-CH-DPR, DPR")
            #expect(hinted.headers[HTTPField.Name("Accept-CH")!] == "Sec-CH-DPR")
            let plain = try await client.execute(uri: path, method: .get)
            #expect(width(plain) == 100)
            // Chosen in the URL, the header is not read and the answer does not vary by it.
            let chosen = try await client.execute(
                uri: signed("/opt/wide.jpg", [("w", "100"), ("dpr", "3")]), method: .get,
                headers: [HTTPField.Name("DPR")!: "1"])
            #expect(width(chosen) == 300 && chosen.headers[.vary] == nil)
        }
    }

    @Test("an option that sets the format wins over Accept, and then the answer does not vary by Accept")
    func formatOption() async throws {
        try await LiveServe.run(service()) { client in
            let webp: HTTPFields = [.accept: "image/webp,*/*"]
            let chosen = try await client.execute(
                uri: signed("/opt/wide.jpg", [("f", "png")], profile: "formats"), method: .get, headers: webp)
            #expect(chosen.headers[.contentType] == "image/png" && chosen.headers[.vary] == nil)
            let auto = try await client.execute(
                uri: signed("/opt/wide.jpg", [], profile: "formats"), method: .get, headers: webp)
            #expect(auto.headers[.contentType] == "image/webp" && auto.headers[.vary] == "Accept")
            let plain = try await client.execute(uri: signed("/opt/wide.jpg", [], profile: "formats"), method: .get)
            #expect(plain.headers[.contentType] == "image/jpeg" && plain.headers[.vary] == "Accept")
        }
    }

    @Test("/prefetch takes paths with options, and refuses one outside the set")
    func prefetch() async throws {
        let service = try service()
        try await LiveServe.run(service) { client in
            let good = signed("/opt/prefetched.jpg", [("w", "600"), ("q", "60")])
            let bad = signed("/opt/prefetched.jpg", [("w", "601")])
            let response = try await client.execute(
                uri: "/prefetch", method: .post, body: ByteBuffer(string: "[\"\(good)\",\"\(bad)\"]"))
            #expect(String(buffer: response.body) == "{\"accepted\":1,\"refused\":1}\n")
            #expect(await eventually { origin.requestCount("/opt/prefetched.jpg") == 1 })
            await service.state.slot.now.pipeline.waitForActivity { $0.isIdle }
            let hit = try await client.execute(
                uri: signed("/opt/prefetched.jpg", [("q", "60"), ("w", "600")]), method: .get)
            #expect(hit.headers[Self.xCache] == "memory")
        }
    }
}
