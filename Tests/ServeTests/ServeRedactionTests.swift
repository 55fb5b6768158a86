import Foundation
import TestSupport
import Testing

/// The names a profile calls secret are hidden by every sink of serve, as the built-in ones are:
/// the access log, error bodies and the spans a collector receives. The release binary, with
/// its exporter, in front of the loopback origin and a real OTLP receiver.
@Suite(.serialized, .needs(.pixels, .network, .process), .loopbackOrigin)
struct ServeRedactionTests {
    /// "thumb" names its secrets; "bare" has no normalize, and the set's names still hold for it.
    static let profiles = """
        profile "thumb" {
          normalize  { drop_query = { "u" }, redact_query = { "pw" } },
          fetch      { block_private = true, allow_loopback = true, retries = 0 },
          decode     {},
          downsample { size = 64, fit = "cover" },
          encode     { format = "jpeg" },
        }
        profile "bare" {
          fetch      { block_private = true, allow_loopback = true, retries = 0 },
          decode     {},
          encode     { format = "jpeg" },
        }
        """

    let origin = LoopbackServer.fixture
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
        origin.route("/a.jpg", .ok(Fixtures.quadrants(width: 96, height: 64)))
        origin.route("/gone.jpg", .status(404))
    }

    @Test func aProfilesOwnSecretNamesReachNoLogErrorOrSpan() async throws {
        let receiver = try await TraceReceiver()
        defer { receiver.stop() }
        let service = try await ServeProcess(
            profileFile: try directory.write("serve.lua", Array(Self.profiles.utf8)),
            ["--allow-unsigned"],
            environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"])
        try #require(!service.running.outputSoFar.contains("has no trace exporter"), "a build with OTLPExporter")
        func get(_ profile: String, _ source: String) async throws -> HTTPAnswer {
            try await Curl.get(service.baseURL + "/unsafe/\(profile)/" + base64url(source))
        }
        let secrets = ["ALICEUSER1", "SECRETPW1", "ALICEUSER2", "SECRETPW2", "SECRETPW3", "SECRETPW4", "SECRETPW5"]
        var bodies: [String] = []
        #expect(try await get("thumb", origin.url("/a.jpg?u=ALICEUSER1&pw=SECRETPW1&w=1")).status == 200)
        #expect(try await get("bare", origin.url("/a.jpg?u=ALICEUSER2&pw=SECRETPW2")).status == 200)
        let failed = try await get("thumb", origin.url("/gone.jpg?pw=SECRETPW3"))
        #expect(failed.status == 404, "\(failed.text)")
        bodies.append(failed.text)
        // The same failure through "bare", whose own stages name no secret.
        let bare = try await get("bare", origin.url("/gone.jpg?pw=SECRETPW5"))
        #expect(bare.status == 404 && bare.text.contains("pw=REDACTED"), "\(bare.text)")
        bodies.append(bare.text)
        // Refused by serve's source policy, before any stage: its error names the source too.
        let refused = try await get("bare", "file:///tmp/a.jpg?pw=SECRETPW4")
        #expect(refused.status == 403, "\(refused.text)")
        #expect(refused.text.contains("pw=REDACTED"), "\(refused.text)")
        bodies.append(refused.text)

        let spans = try await receiver.spans { spans in
            spans.filter { $0.kind == 2 }.count >= 5 && spans.filter { $0.name == "pipeline.image" }.count >= 4
        }
        let log = try await service.stop().stderr
        #expect(log.contains("u=REDACTED&pw=REDACTED"), "\(log)")
        let shownSources = spans.compactMap { $0.attributes["pipelinehost.source"] }
        #expect(shownSources.count >= 3 && shownSources.allSatisfy { $0.contains("pw=REDACTED") }, "\(shownSources)")
        let attributes = spans.flatMap { $0.attributes.values }.joined(separator: "\n")
        for secret in secrets {
            #expect(!log.contains(secret), "\(secret) in the access log")
            #expect(!attributes.contains(secret), "\(secret) in a span")
            #expect(!bodies.joined().contains(secret), "\(secret) in an error body")
        }
    }
}
