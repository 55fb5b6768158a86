import Foundation
import PipelineHost
import TestSupport
import Testing

/// `s3://BUCKET/KEY` sources through `pipelinehost run`, against moto's S3 server with
/// authentication on: the signature is checked for real.
@Suite(.serialized, .needs(.pixels, .network, .process)) struct S3SourceTests {
    static let profile = """
        profile "thumb" {
          fetch      { schemes = { "s3", "https" }, retries = 0 },
          cache      { disk = true },
          decode     {},
          downsample { size = 64, fit = "cover" },
          encode     { format = "jpeg", quality = 80 },
        }
        """

    let fixture: S3Fixture
    var s3: S3Server { fixture.s3 }
    var directory: TemporaryDirectory { fixture.directory }
    var profileFile: String { fixture.profileFile }

    init() async throws {
        fixture = try await S3Fixture(bucket: "photos", profile: Self.profile)
        try await fixture.s3.put("photos", "covers/one.jpg", file: Fixtures.path("examples/sample.jpg"))
        try await fixture.s3.put("photos", "covers/two.jpg", file: Fixtures.path("docs/gallery/cover.jpg"))
    }

    func run(_ arguments: [String], profile: String? = nil, environment: [String: String]? = nil) async throws
        -> CLIProcess.Outcome
    {
        try await CLIProcess.run(
            ["run", profile ?? profileFile, "--output-dir", directory.file("out"), "--no-progress"] + arguments,
            environment: environment ?? s3.environment)
    }

    @Test func keysInABucketAreFetchedSignedAndMadeIntoThumbnails() async throws {
        defer { s3.stop() }
        let outcome = try await run(["s3://photos/covers/one.jpg", "s3://photos/covers/two.jpg", "--json"])
        #expect(outcome.status == 0, "\(outcome.output)")
        let lines = outcome.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(
            lines.allSatisfy { $0.contains("\"width\":64") && $0.contains("\"type\":\"result\"") }, "\(outcome.stdout)")
        #expect(!outcome.output.contains(s3.secretAccessKey))
    }

    @Test func aMissingKeyIsNotFoundNamingTheBucketAndTheRestStillFinish() async throws {
        defer { s3.stop() }
        let outcome = try await run(["s3://photos/covers/none.jpg", "s3://photos/covers/one.jpg", "--json"])
        #expect(outcome.status == 1)
        let failed = try #require(outcome.stdout.split(separator: "\n").first { $0.contains("none.jpg") })
        #expect(failed.contains("\"http_status\":404"), "\(failed)")
        #expect(failed.contains("\"s3_code\":\"NoSuchKey\""), "\(failed)")
        #expect(failed.contains("bucket photos"), "\(failed)")
        #expect(outcome.stdout.contains("\"type\":\"result\""))
    }

    @Test func aMissingKeyGetsTheProfilesFallback() async throws {
        defer { s3.stop() }
        let placeholder = try directory.write("missing.jpg", try Fixtures.read(Fixtures.path("examples/sample.jpg")))
        let profile = try fixture.variant(
            "fallback.lua", replacing: "  encode     { format = \"jpeg\", quality = 80 },",
            with: "  encode     { format = \"jpeg\", quality = 80 },\n  fallback   { file = \"\(placeholder)\" },")
        let outcome = try await run(["s3://photos/covers/none.jpg", "--fallback", "--json"], profile: profile)
        #expect(outcome.status == 1, "the failure is still reported")
        #expect(outcome.stdout.contains("\"s3_code\":\"NoSuchKey\""), "\(outcome.output)")
        let written = try FileManager.default.contentsOfDirectory(atPath: directory.file("out"))
        #expect(
            written.contains { $0.hasPrefix("none-") }, "the fallback stands where none.jpg's result would: \(written)")
    }

    @Test func aWrongSecretIsSignatureDoesNotMatchAndNeverRememberedByTheSharedCache() async throws {
        defer { s3.stop() }
        let redis = try await RedisServer()
        defer { redis.stopNow() }
        var wrong = s3.environment
        wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
        let refused = try await run(
            ["s3://photos/covers/one.jpg", "--json", "--shared-cache", redis.url], environment: wrong)
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("\"s3_code\":\"SignatureDoesNotMatch\""), "\(refused.output)")
        #expect(refused.stdout.contains("\"http_status\":403"))
        #expect(!refused.output.contains("not-the-secret"))
        // A negative entry would fail this run too, from Redis, without asking S3.
        let fixed = try await run(["s3://photos/covers/one.jpg", "--json", "--shared-cache", redis.url])
        #expect(fixed.status == 0, "\(fixed.output)")
    }

    @Test func aSessionTokenIsSentAndSigned() async throws {
        defer { s3.stop() }
        let session = try await s3.sessionCredentials()
        var environment = s3.environment
        environment["AWS_ACCESS_KEY_ID"] = session.key
        environment["AWS_SECRET_ACCESS_KEY"] = session.secret
        environment["AWS_SESSION_TOKEN"] = session.token
        let signed = try await run(["s3://photos/covers/one.jpg", "--no-cache"], environment: environment)
        #expect(signed.status == 0, "\(signed.output)")
        environment["AWS_SESSION_TOKEN"] = nil
        let without = try await run(["s3://photos/covers/one.jpg", "--no-cache"], environment: environment)
        #expect(without.status == 1, "\(without.output)")
        #expect(!without.output.contains(session.secret) && !signed.output.contains(session.token))
    }

    @Test func theSchemeIsOffUnlessAProfileListsItAndAllowHostsMatchesTheBucket() async throws {
        defer { s3.stop() }
        let plain = try fixture.variant("plain.lua", replacing: "schemes = { \"s3\", \"https\" }, ", with: "")
        let off = try await run(["s3://photos/covers/one.jpg"], profile: plain)
        #expect(off.status == 1)
        #expect(off.output.contains("scheme 's3' is not allowed"), "\(off.output)")
        let other = try fixture.variant(
            "other.lua", replacing: "retries = 0", with: "retries = 0, allow_hosts = { \"other\" }")
        let blocked = try await run(["s3://photos/covers/one.jpg", "--no-cache"], profile: other)
        #expect(blocked.output.contains("bucket photos is not in allow_hosts"), "\(blocked.output)")
        let own = try fixture.variant(
            "own.lua", replacing: "retries = 0", with: "retries = 0, allow_hosts = { \"photos\" }")
        #expect(try await run(["s3://photos/covers/one.jpg", "--no-cache"], profile: own).status == 0)
    }

    @Test func aKeyCannotClimbIntoAnotherBucket() async throws {
        defer { s3.stop() }
        try await s3.makeBucket("private")
        try await s3.put("private", "secret.jpg", file: Fixtures.path("examples/sample.jpg"))
        let own = try fixture.variant(
            "climb.lua", replacing: "retries = 0", with: "retries = 0, allow_hosts = { \"photos\" }")
        // libcurl would send /photos/../private/secret.jpg as /private/secret.jpg (path-style).
        for source in ["s3://photos/../private/secret.jpg", "s3://photos/%2e%2E/private/secret.jpg"] {
            let outcome = try await run([source, "--no-cache", "--json"], profile: own)
            #expect(outcome.status == 1, "\(source): \(outcome.output)")
            #expect(outcome.stdout.contains("\"kind\":\"invalid_source\""), "\(outcome.stdout)")
        }
    }

    @Test func aStaleOriginalIsRevalidatedWithItsETag() async throws {
        defer { s3.stop() }
        let cache = directory.file("cache")
        #expect(try await run(["s3://photos/covers/one.jpg", "--cache-dir", cache]).status == 0)
        let again = try await run([
            "s3://photos/covers/one.jpg", "--cache-dir", cache, "--refresh", "--stats", "--json",
        ])
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("\"revalidated\":1"), "\(again.output)")
    }
}
