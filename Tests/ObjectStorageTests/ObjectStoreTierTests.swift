import Foundation
import PipelineHost
import TestSupport
import Testing

/// The object-store tier and purge, with serve nodes as operators run them: a loopback origin,
/// moto's S3 server with authentication on, and a redis-server where nodes share one.
@Suite(.serialized, .needs(.pixels, .network, .process, .redis), .loopbackOrigin)
struct ObjectStoreTierTests {
    static let profile = """
        profile "thumb" {
          fetch      { retries = 0, block_private = false },
          cache      { disk = true },
          decode     {},
          downsample { size = 48, fit = "cover" },
          encode     { format = "jpeg" },
          cache      { memory = true, disk = true },
        }
        """
    static let key = "2b6901835873f8d0dfb4168ed799970aac92de31235d87b7ffb2a17b3c6eca7f"
    static let salt = "f317d2c10fa8f2bec97d1aa57caa5493"

    let origin = LoopbackServer.fixture
    let fixture: S3Fixture
    var s3: S3Server { fixture.s3 }
    var directory: TemporaryDirectory { fixture.directory }
    var profileFile: String { fixture.profileFile }

    init() async throws { fixture = try await S3Fixture(bucket: "thumbs", profile: Self.profile) }

    func node(_ name: String, _ arguments: [String] = []) async throws -> ServeProcess {
        try await ServeProcess(
            profileFile: profileFile,
            [
                "--allow-unsigned", "--no-access-log", "--cache-dir", directory.file(name), "--object-store",
                "s3://thumbs/v1",
            ] + arguments,
            environment: s3.environment.merging(["PIPELINEHOST_KEY": Self.key, "PIPELINEHOST_SALT": Self.salt]) { $1 })
    }

    func path(_ route: String) -> String { "/unsafe/thumb/" + base64url(origin.url(route)) }

    @Test func aNodeWithAnEmptyDiskIsAnsweredFromTheStoreAndFillsItsDisk() async throws {
        defer { s3.stop() }
        origin.route("/store-a.jpg", .ok(Fixtures.quadrants(width: 320, height: 200)))
        let first = try await node("a")
        let made = try await Curl.get(first.baseURL + path("/store-a.jpg"))
        #expect(made.status == 200 && made.headers["x-cache"] == "miss")
        _ = try await first.stop()  // drains: the background stores have landed
        #expect(try await s3.keys("thumbs", prefix: "v1/").count == 2, "the original and the variant")

        let second = try await node("b")
        let found = try await Curl.get(second.baseURL + path("/store-a.jpg"))
        #expect(found.status == 200)
        #expect(found.headers["x-cache"] == "store")
        #expect(found.body == made.body)
        #expect(origin.requestCount("/store-a.jpg") == 1, "one transfer between the two nodes")
        let metrics = try await Curl.get(second.baseURL + "/metrics").text
        #expect(metrics.contains("pipelinehost_store_hits_total 1"), "\(metrics)")
        _ = try await second.stop()
        let disk = DiskCache(directory: directory.file("b"))
        #expect(disk.entryPaths.count == 1, "the variant, copied onto the empty disk")
    }

    @Test func aStoreKilledMidRunCostsMissesNeverAnswers() async throws {
        origin.route("/store-down.jpg", .ok(Fixtures.quadrants(width: 320, height: 200)))
        let serve = try await node("down", ["--store-timeout", "500"])
        #expect(try await Curl.get(serve.baseURL + path("/store-down.jpg")).status == 200)
        s3.stop()
        for index in 1...6 {
            origin.route("/store-down-\(index).jpg", .ok(Fixtures.quadrants(width: 320, height: 200)))
            let answer = try await Curl.get(serve.baseURL + path("/store-down-\(index).jpg"), maxTime: 120)
            #expect(answer.status == 200, "request \(index) while the store is down")
        }
        let metrics = try await Curl.get(serve.baseURL + "/metrics").text
        #expect(metrics.contains("pipelinehost_store_errors_total"), "\(metrics)")
        #expect(!metrics.contains("pipelinehost_store_errors_total 0"), "\(metrics)")
        #expect(try await serve.stop().status == 0)
    }

    @Test func aPurgeDropsASourceFromEveryTierOnEveryNode() async throws {
        defer { s3.stop() }
        let redis = try await RedisServer()
        defer { redis.stopNow() }
        origin.route("/purged.jpg", .ok(Fixtures.quadrants(width: 320, height: 200)))
        let shared = ["--shared-cache", redis.url] + RedisServer.sharedTimeoutFlag
        let a = try await node("pa", shared)
        let b = try await node("pb", shared)
        #expect(try await Curl.get(a.baseURL + path("/purged.jpg")).headers["x-cache"] == "miss")
        #expect(try await Curl.get(b.baseURL + path("/purged.jpg")).headers["x-cache"] == "shared")
        #expect(try await Curl.get(b.baseURL + path("/purged.jpg")).headers["x-cache"] == "memory")
        #expect(origin.requestCount("/purged.jpg") == 1)
        #expect(await eventually { (try? await s3.keys("thumbs", prefix: "v1/").count) == 2 })

        let signed = try await CLIProcess.run(
            ["sign", "--purge", origin.url("/purged.jpg")],
            environment: ["PIPELINEHOST_KEY": Self.key, "PIPELINEHOST_SALT": Self.salt])
        #expect(signed.status == 0, "\(signed.output)")
        let purgePath = signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(purgePath.hasPrefix("/purge/"))
        var forged = Array(purgePath)
        forged[8] = forged[8] == "A" ? "B" : "A"
        #expect(try await Curl.get(a.baseURL + String(forged), method: "POST").status == 403)
        #expect(
            try await Curl.get(
                a.baseURL + path("/purged.jpg").replacingOccurrences(of: "/unsafe/thumb", with: "/purge/unsafe"),
                method: "POST"
            ).status != 200)

        let purged = try await Curl.get(a.baseURL + purgePath, method: "POST")
        #expect(purged.status == 200, "\(purged.text)")
        #expect(purged.text.contains("\"store\":2"), "\(purged.text)")
        #expect(try await s3.keys("thumbs", prefix: "v1/").isEmpty)
        #expect(try await redis.cli(["--scan", "--pattern", "pipelinehost:v1:{*"]).isEmpty)
        // b heard it over the shared tier's channel and dropped its memory and disk copies.
        #expect(await eventually { b.running.outputSoFar.contains("purged on another node's request") })

        let again = try await Curl.get(b.baseURL + path("/purged.jpg"))
        #expect(again.status == 200 && again.headers["x-cache"] == "miss", "\(again.headers)")
        #expect(origin.requestCount("/purged.jpg") == 2, "one transfer after the purge")
        #expect(try await Curl.get(a.baseURL + path("/purged.jpg")).headers["x-cache"] == "shared")
        #expect(origin.requestCount("/purged.jpg") == 2)
        _ = try await a.stop()
        _ = try await b.stop()
    }

    @Test func cachePurgeDropsASourceFromTheDiskAndTheStore() async throws {
        defer { s3.stop() }
        origin.route("/cli-purge.jpg", .ok(Fixtures.quadrants(width: 320, height: 200)))
        let run = try fixture.variant("run.lua", replacing: ", block_private = false", with: "")
        let cache = directory.file("cli")
        let common = ["--cache-dir", cache, "--object-store", "s3://thumbs/cli"]
        let made = try await CLIProcess.run(
            ["run", run, origin.url("/cli-purge.jpg"), "--output-dir", directory.file("out")] + common,
            environment: s3.environment)
        #expect(made.status == 0, "\(made.output)")
        #expect(try await s3.keys("thumbs", prefix: "cli/").count == 2)
        let purge = try await CLIProcess.run(
            ["cache", "purge", "--profiles", run, origin.url("/cli-purge.jpg")] + common, environment: s3.environment)
        #expect(purge.status == 0, "\(purge.output)")
        #expect(purge.stdout.contains("disk: removed 2 entries"), "\(purge.stdout)")
        #expect(purge.stdout.contains("store: removed 2 entries"), "\(purge.stdout)")
        #expect(try await s3.keys("thumbs", prefix: "cli/").isEmpty)
        #expect(DiskCache(directory: cache).entryPaths.isEmpty)
    }

    @Test func aStoreValueNotSealedWithTheSharedSecretIsCorruptAndTheWorkRuns() async throws {
        defer { s3.stop() }
        origin.route("/sealed.jpg", .ok(Fixtures.quadrants(width: 320, height: 200)))
        let run = try fixture.variant("sealed.lua", replacing: ", block_private = false", with: "")
        // PIPELINEHOST_OBJECT_STORE names the store, as --object-store does.
        let environment = s3.environment.merging(["PIPELINEHOST_OBJECT_STORE": "s3://thumbs/sealed"]) { $1 }
        func make(_ name: String, secret: String?) async throws -> CLIProcess.Outcome {
            try await CLIProcess.run(
                [
                    "run", run, origin.url("/sealed.jpg"), "--output-dir", directory.file("out-\(name)"), "--cache-dir",
                    directory.file(name), "--stats", "--no-progress",
                ],
                environment: environment.merging(secret.map { ["PIPELINEHOST_SHARED_SECRET": $0] } ?? [:]) { $1 })
        }
        let unsealed = try await make("plain", secret: nil)
        #expect(unsealed.status == 0, "\(unsealed.output)")
        #expect(try await s3.keys("thumbs", prefix: "sealed/").count == 2)
        // A node with the secret refuses what was written without it: a forger's value reads the same.
        let sealed = try await make("sealed", secret: String(repeating: "7e", count: 32))
        #expect(sealed.status == 0, "\(sealed.output)")
        #expect(sealed.stdout.contains("\"corrupt_entries\":2"), "the variant and the original: \(sealed.stdout)")
        #expect(origin.requestCount("/sealed.jpg") == 2, "the work ran again")
    }

    @Test func anObjectStoreWithoutCredentialsIsAUsageErrorAtStart() async throws {
        defer { s3.stop() }
        let outcome = try await CLIProcess.run(
            ["run", profileFile, "https://example.com/a.jpg", "--object-store", "s3://thumbs"],
            environment: ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""])
        #expect(outcome.status == 2)
        #expect(outcome.stderr.contains("--object-store s3://thumbs: no S3 credentials"), "\(outcome.stderr)")
        let bad = try await CLIProcess.run([
            "run", profileFile, "https://example.com/a.jpg", "--object-store", "s3://Thumbs",
        ])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("--object-store takes s3://bucket"), "\(bad.stderr)")
        // The environment variable is read by the same code, in the same words, naming itself.
        let badVariable = try await CLIProcess.run(
            ["run", profileFile, "https://example.com/a.jpg"], environment: ["PIPELINEHOST_OBJECT_STORE": "s3://Thumbs"]
        )
        #expect(badVariable.status == 2)
        #expect(
            badVariable.stderr.contains(
                "PIPELINEHOST_OBJECT_STORE takes s3://bucket or s3://bucket/prefix, not s3://Thumbs"),
            "\(badVariable.stderr)")
    }
}
