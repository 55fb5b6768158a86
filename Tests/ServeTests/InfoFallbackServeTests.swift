import Foundation
import HTTPTypes
import Hummingbird
import PipelineHost
import TestSupport
import Testing

@testable import PipelineHostServe

/// Serve's `/info` and a profile's fallback, on real stages in front of the loopback origin.
@Suite("serve: /info and fallbacks", .needs(.pixels, .network), .loopbackOrigin)
struct InfoFallbackServeTests {
    static let profiles = """
        profile "thumb" {
          fetch      { block_private = true, allow_loopback = true, timeout = 120, low_speed_time = 120, retries = 0 },
          decode     {},
          downsample { size = 32, fit = "cover" },
          encode     { format = "png" },
          cache      { memory = true },
          fallback   { file = "missing.png", status = 404, max_age = 30 },
          info       {},
        }
        profile "sized" {
          params     { w = { 16, 48, default = 16 } },
          fetch      { block_private = true, allow_loopback = true, timeout = 120, low_speed_time = 120, retries = 0 },
          decode     {},
          downsample { size = param "w", fit = "cover" },
          encode     { format = "png" },
          fallback   { file = "missing.png" },
          info       {},
        }
        profile "plain" {
          fetch      { block_private = true, allow_loopback = true, timeout = 120, low_speed_time = 120, retries = 0 },
          decode     {},
          encode     { format = "png" },
        }
        """

    let origin = LoopbackServer.fixture
    let signer = try! URLSigner(keys: SigningTests.key("a1"), salts: "0f0e")
    let directory: TemporaryDirectory
    static let missing = Fixtures.painted(width: 90, height: 60) { _, _ in [20, 200, 90] }

    init() throws {
        directory = try TemporaryDirectory()
        _ = try directory.write("missing.png", Self.missing)
        origin.route("/iaf/cover.jpg", .ok(Fixtures.quadrants(width: 200, height: 120)))
        origin.route("/iaf/held.jpg", .held(gate: "iaf-held", .ok(Fixtures.sample)))
        origin.route("/iaf/gone.jpg", .status(404))
        origin.route("/iaf/page.jpg", .ok(Array("<!doctype html><html>hi</html>".utf8), contentType: "text/html"))
        origin.route("/iaf/broken.jpg", .status(500))
    }

    func service() throws -> ServeApplication {
        let settings = ServeSettings.forTest(signer: signer)
        let file = directory.file("serve.lua")
        return try ServeApplication(settings: settings) { try TestPipeline.load(Self.profiles, name: file) }
    }

    func signed(_ profile: String, _ path: String, options: [(String, String)] = []) -> String {
        try! ServePath.signed(profile: profile, source: origin.url(path), options: options, signer: signer)!
    }

    static let xCache = HTTPField.Name("X-Cache")!

    struct Info: Decodable { let width: Int, height: Int, format: String, blurhash: String, thumbhash: String }

    @Test("/info answers the image path's JSON under the same signature, cached like a variant; a bad signature is 403")
    func infoAnswersJSON() async throws {
        try await LiveServe.run(service()) { client in
            let path = "/info" + signed("thumb", "/iaf/cover.jpg")
            let response = try await client.execute(uri: path, method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/json")
            let info = try JSONDecoder().decode(Info.self, from: Data(buffer: response.body))
            #expect(info.width == 200 && info.height == 120 && info.format == "jpeg")
            let again = try await client.execute(uri: path, method: .get)
            #expect(again.headers[Self.xCache] == "memory")
            #expect(again.body == response.body)

            let forged = try await client.execute(
                uri: "/info/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/thumb/plain/"
                    + origin.url("/iaf/cover.jpg").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
                method: .get)
            #expect(forged.status == .forbidden)
            // The chains made from a profile are not profiles a path can name.
            let derived = try await client.execute(
                uri: RawPath.signed(
                    profile: ProfileSet.infoName("thumb"), source: origin.url("/iaf/cover.jpg"), signer: signer),
                method: .get)
            #expect(derived.status == .notFound)
        }
    }

    @Test("/info answers only for a profile that writes info { }: a public image URL publishes nothing more")
    func infoOnlyWhereDeclared() async throws {
        try await LiveServe.run(service()) { client in
            let image = try await client.execute(uri: signed("plain", "/iaf/cover.jpg"), method: .get)
            #expect(image.status == .ok)
            let info = try await client.execute(uri: "/info" + signed("plain", "/iaf/cover.jpg"), method: .get)
            #expect(info.status == .notFound)
            #expect(String(buffer: info.body).contains("does not answer /info"), "\(String(buffer: info.body))")
            // A source that is not there is not_found, for /info as for the image, as the docs say.
            let gone = try await client.execute(uri: "/info" + signed("thumb", "/iaf/gone.jpg"), method: .get)
            #expect(gone.status == .notFound)
            let body = String(buffer: gone.body)
            #expect(body.contains(#""kind":"not_found""#) && body.contains(#""upstream_status":404"#), "\(body)")
        }
    }

    @Test("/info and an image request for the same source share one transfer")
    func infoSharesTheTransfer() async throws {
        let service = try service()
        try await LiveServe.run(service) { client in
            async let image = client.execute(uri: signed("thumb", "/iaf/held.jpg"), method: .get)
            async let info = client.execute(uri: "/info" + signed("thumb", "/iaf/held.jpg"), method: .get)
            // Both wait on the one held transfer before it is let go.
            await service.state.slot.now.pipeline.waitForActivity { $0.waitingRequests == 2 }
            origin.open("iaf-held")
            let (imageResponse, infoResponse) = try await (image, info)
            #expect(imageResponse.status == .ok && infoResponse.status == .ok)
            #expect(infoResponse.headers[.contentType] == "application/json")
            #expect(origin.requestCount("/iaf/held.jpg") == 1)
        }
    }

    @Test(
        "a missing source or a page answers the fallback: the profile's size and format, its status, a short max-age",
        arguments: ["/iaf/gone.jpg", "/iaf/page.jpg"])
    func fallbackAnswers(_ path: String) async throws {
        try await LiveServe.run(service()) { client in
            let response = try await client.execute(uri: signed("thumb", path), method: .get)
            #expect(response.status == .notFound)
            #expect(response.headers[Self.xCache] == "fallback")
            #expect(response.headers[.cacheControl] == "public, max-age=30")
            #expect(response.headers[.contentType] == "image/png")
            let info = try #require(Fixtures.info(Array(response.body.readableBytesView)))
            #expect(info.format == "png" && info.width == 32 && info.height == 32)
            let pixels = try #require(Fixtures.decoded(Array(response.body.readableBytesView)))
            #expect(pixels[16, 16] == [20, 200, 90])
        }
    }

    @Test("a fallback has the size the request's option chose; /info takes the same options")
    func fallbackWithOptions() async throws {
        try await LiveServe.run(service()) { client in
            let large = try await client.execute(
                uri: signed("sized", "/iaf/gone.jpg", options: [("w", "48")]), method: .get)
            #expect(large.status == .notFound && large.headers[Self.xCache] == "fallback")
            #expect(Fixtures.info(Array(large.body.readableBytesView))?.width == 48)
            let small = try await client.execute(uri: signed("sized", "/iaf/gone.jpg"), method: .get)
            #expect(Fixtures.info(Array(small.body.readableBytesView))?.width == 16)
            let info = try await client.execute(
                uri: "/info" + signed("sized", "/iaf/cover.jpg", options: [("w", "48")]), method: .get)
            #expect(info.status == .ok && info.headers[.contentType] == "application/json")
        }
    }

    @Test("other failures, and profiles without a fallback, answer their error as before")
    func noFallback() async throws {
        try await LiveServe.run(service()) { client in
            let broken = try await client.execute(uri: signed("thumb", "/iaf/broken.jpg"), method: .get)
            #expect(broken.status == .badGateway)
            #expect(broken.headers[Self.xCache] == nil)
            let plain = try await client.execute(uri: signed("plain", "/iaf/gone.jpg"), method: .get)
            #expect(plain.status == .notFound)
            #expect(plain.headers[.contentType] == "application/json")
        }
    }

    @Test("a fallback is never stored under the failed source's key: once the source is back, it is served")
    func fallbackNeverStored() async throws {
        origin.route("/iaf/flip.jpg", .status(404))
        let service = try service()
        try await LiveServe.run(service) { client in
            let first = try await client.execute(uri: signed("thumb", "/iaf/flip.jpg"), method: .get)
            #expect(first.headers[Self.xCache] == "fallback")
            let second = try await client.execute(uri: signed("thumb", "/iaf/flip.jpg"), method: .get)
            #expect(second.headers[Self.xCache] == "fallback")
            #expect(second.body == first.body)
            #expect(origin.requestCount("/iaf/flip.jpg") == 2)

            origin.route("/iaf/flip.jpg", .ok(Fixtures.quadrants(width: 200, height: 120)))
            let back = try await client.execute(uri: signed("thumb", "/iaf/flip.jpg"), method: .get)
            #expect(back.status == .ok)
            #expect(back.headers[Self.xCache] == "miss")
            #expect(back.body != first.body)
            #expect(Fixtures.info(Array(back.body.readableBytesView))?.width == 32)
        }
    }
}
