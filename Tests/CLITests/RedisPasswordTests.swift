import Foundation
import TestSupport
import Testing

/// The shared tier on a Redis that asks for a password, as a managed one does: the password
/// comes from PIPELINEHOST_REDIS_PASSWORD, AUTH runs on every connection (the done channel's
/// too), a wrong or missing one exits 2 at start, and it is in no output.
@Suite(
    "the shared tier with a password, as subprocesses", .needs(.pixels, .network, .process, .redis),
    .loopbackOrigin)
struct RedisPasswordTests {
    static let password = "pw-7d1c9e2b4a"
    let origin = LoopbackServer.fixture
    let directory: TemporaryDirectory

    static let profile = """
        profile "thumb" {
          fetch      { timeout = 5, retries = 0 },
          cache      { disk = true },
          decode     {},
          downsample { size = 32 },
          encode     { format = "jpeg" },
          cache      { memory = true },
        }
        """

    init() throws {
        directory = try TemporaryDirectory()
        _ = try directory.write("p.lua", Array(Self.profile.utf8))
        for n in 0..<4 { origin.route("/redis-auth/\(n).jpg", .ok(Fixtures.quadrants(width: 120, height: 80))) }
    }

    func run(_ node: String, _ sources: [String], redis: String, environment: [String: String]) async throws
        -> CLIProcess.Outcome
    {
        try await CLIProcess.run(
            [
                "run", directory.file("p.lua"), "--cache-dir", directory.file("cache-" + node), "--output-dir",
                directory.file("out-" + node), "--shared-cache", redis, "--json", "--stats", "--no-progress",
            ] + sources,
            environment: environment)
    }

    @Test("a second node is served from the password-protected Redis with no transfer; the password is in no output")
    func secondNodeFromRedis() async throws {
        let redis = try await RedisServer(password: Self.password)
        defer { redis.stopNow() }
        let sources = (0..<2).map { origin.url("/redis-auth/\($0).jpg") }
        let environment = ["PIPELINEHOST_REDIS_PASSWORD": Self.password]
        let first = try await run("a", sources, redis: redis.url, environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        let before = sources.indices.map { origin.requestCount("/redis-auth/\($0).jpg") }
        let second = try await run("b", sources, redis: redis.url, environment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(sources.indices.map { origin.requestCount("/redis-auth/\($0).jpg") } == before)
        #expect(second.stdout.contains("\"cache\":\"shared\""))
        for outcome in [first, second] {
            #expect(!outcome.stdout.contains(Self.password) && !outcome.stderr.contains(Self.password))
        }
    }

    @Test("an ACL user with its password works too")
    func aclUser() async throws {
        let redis = try await RedisServer(password: Self.password)
        defer { redis.stopNow() }
        try await redis.addUser("pipelinehost", password: "user-pw-55")
        let url = "redis://pipelinehost@127.0.0.1:\(redis.port)"
        let outcome = try await run(
            "acl", [origin.url("/redis-auth/2.jpg")], redis: url,
            environment: ["PIPELINEHOST_REDIS_PASSWORD": "user-pw-55"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(try await redis.cli(["--scan"]).contains("pipelinehost:"))
    }

    @Test(
        "a wrong or missing password, or a wrong user, exits 2 at start with one line",
        arguments: [
            ("", "wrong-pw", "refused the credentials"),
            ("", nil, "asks for a password: set PIPELINEHOST_REDIS_PASSWORD"),
            ("nobody@", Self.password, "refused the credentials"),
        ] as [(String, String?, String)])
    func refused(_ user: String, _ password: String?, _ message: String) async throws {
        let redis = try await RedisServer(password: Self.password)
        defer { redis.stopNow() }
        let url = "redis://\(user)127.0.0.1:\(redis.port)"
        let environment = password.map { ["PIPELINEHOST_REDIS_PASSWORD": $0] } ?? [:]
        for command in [
            ["run", directory.file("p.lua"), origin.url("/redis-auth/3.jpg"), "-o", directory.file("x.jpg")],
            ["serve", directory.file("p.lua"), "--port", "0", "--allow-unsigned"],
        ] {
            let outcome = try await CLIProcess.run(command + ["--shared-cache", url], environment: environment)
            #expect(outcome.status == 2, "\(command[0]): \(outcome.stderr)")
            let lines = outcome.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines.first?.contains(message) == true, "\(command[0]): \(outcome.stderr)")
            #expect(!outcome.stderr.contains(Self.password) && !outcome.stderr.contains("wrong-pw"))
        }
        #expect(origin.requestCount("/redis-auth/3.jpg") == 0)
    }

    @Test("a password written in the URL works, with a warning that it is visible")
    func passwordInURL() async throws {
        let redis = try await RedisServer(password: Self.password)
        defer { redis.stopNow() }
        let outcome = try await run(
            "url", [origin.url("/redis-auth/1.jpg")], redis: "redis://:\(Self.password)@127.0.0.1:\(redis.port)",
            environment: [:])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("warning: the Redis password in --shared-cache is visible"))
        #expect(!outcome.stderr.contains(Self.password) && !outcome.stdout.contains(Self.password))
    }
}
