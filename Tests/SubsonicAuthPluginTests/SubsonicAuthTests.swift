import Foundation
import PipelineHost
import TestSupport
import Testing

@Suite(
    "subsonic_auth: a fresh signature per transfer, never a credential in sight", .needs(.pixels, .network, .process),
    .loopbackOrigin)
struct SubsonicAuthTests {
    let server = LoopbackServer.fixture
    let directory: TemporaryDirectory
    let password = "open-sesame-7f3a"
    var environment: [String: String] { ["PIPELINEHOST_SECRET_SUBSONIC_PASSWORD": password] }

    init() throws {
        directory = try TemporaryDirectory()
        server.route(
            "/rest/getCoverArt",
            .subsonic(
                user: "alice", password: password,
                .ok(Fixtures.sample, contentType: "image/jpeg")))
    }

    /// A profile file in the scratch directory.
    private func profile(_ auth: String) throws -> String {
        try directory.write(
            "subsonic.lua",
            Array(
                """
                profile "cover" {
                  normalize     { drop_query = { "u", "t", "s", "p", "v", "c" } },
                  subsonic_auth { \(auth) },
                  fetch         { timeout = 10 },
                  decode        {},
                  downsample    { size = 64, fit = "cover" },
                  encode        { format = "jpeg" },
                }
                """.utf8))
    }

    private func run(_ auth: String, ids: [String], extra: [String] = [], environment: [String: String]? = nil)
        async throws -> CLIProcess.Outcome
    {
        let sources = ids.map { server.url("/rest/getCoverArt?id=\($0)") }
        return try await CLIProcess.run(
            ["run", try profile(auth)] + sources + ["--output-dir", directory.file("out")] + extra,
            environment: environment ?? self.environment)
    }

    @Test("every transfer carries a valid token with a salt of its own")
    func freshSalts() async throws {
        let first = try await run(#"user = "alice""#, ids: ["al-1", "al-2", "al-3"])
        let second = try await run(#"user = "alice""#, ids: ["al-1"])
        #expect(first.status == 0 && second.status == 0, "\(first.output)\(second.output)")
        let queries = server.queries("/rest/getCoverArt")
        #expect(queries.count == 4)
        #expect(queries.allSatisfy { SubsonicAuthCheck.valid(query: $0, user: "alice", password: password) })
        let salts = queries.compactMap { SubsonicAuthCheck.parameters($0)["s"] }
        #expect(Set(salts).count == 4)
        // The same image gets the same output name in both runs: the key has no salt.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.file("out")).count == 3)
    }

    @Test("the plain method sends p=enc:<hex>, which the server accepts")
    func plainMethod() async throws {
        let outcome = try await run(#"user = "alice", method = "plain""#, ids: ["al-1"])
        #expect(outcome.status == 0, "\(outcome.output)")
        let query = try #require(server.queries("/rest/getCoverArt").first)
        #expect(usesPlainForm(query))
        #expect(SubsonicAuthCheck.valid(query: query, user: "alice", password: password))
    }

    @Test("a wrong password gets Subsonic's XML error, reported as not an image")
    func wrongPassword() async throws {
        let outcome = try await run(
            #"user = "alice""#, ids: ["al-1"], environment: ["PIPELINEHOST_SECRET_SUBSONIC_PASSWORD": "wrong"])
        #expect(outcome.status == 1)
        #expect(outcome.stderr.contains("getCoverArt?id=al-1: not an image (text/xml)"))
    }

    @Test("a missing password variable is a clear error that names it")
    func missingVariable() async throws {
        let outcome = try await run(
            #"user = "alice", password_env = "PIPELINEHOST_SECRET_TEST_NO_SUCH_VARIABLE""#, ids: ["al-1"])
        #expect(outcome.status == 1)
        #expect(
            outcome.stderr.contains(
                "subsonic_auth: the environment variable PIPELINEHOST_SECRET_TEST_NO_SUCH_VARIABLE is not set"))
        #expect(server.requestCount("/rest/getCoverArt") == 0)
    }

    /// A profile is not trusted with the process's secrets: `password_env` names only what the
    /// operator allows, and never the service's own keys, refused at load with file:line.
    @Test(
        "a profile cannot read the service's key, nor a variable the operator did not allow",
        arguments: [
            ("PIPELINEHOST_KEY", "one of the service's own secrets"),
            ("PIPELINEHOST_SALT", "one of the service's own secrets"),
            ("PIPELINEHOST_REDIS_PASSWORD", "one of the service's own secrets"),
            ("AWS_SECRET_ACCESS_KEY", "one of the service's own secrets"),
            ("AWS_SESSION_TOKEN", "one of the service's own secrets"), ("HOME", "--allow-env HOME"),
            ("SUBSONIC_PASSWORD", "--allow-env SUBSONIC_PASSWORD"),
        ])
    func secretsStayPut(_ variable: String, _ why: String) async throws {
        let auth = #"user = "alice", method = "plain", password_env = "\#(variable)""#
        let environment = environment.merging([variable: "0123456789abcdef0123456789abcdef"]) { $1 }
        for command in ["run", "check"] {
            let outcome = try await CLIProcess.run(
                command == "run"
                    ? [
                        "run", try profile(auth), server.url("/rest/getCoverArt?id=1"), "--output-dir",
                        directory.file("out"),
                    ]
                    : ["check", try profile(auth)], environment: environment)
            #expect(outcome.status == 2, "\(command): \(outcome.output)")
            #expect(
                outcome.stderr.contains("subsonic.lua:3: subsonic_auth: 'password_env': \(variable)"),
                "\(outcome.stderr)")
            #expect(outcome.stderr.contains(why), "\(outcome.stderr)")
        }
        #expect(server.requestCount("/rest/getCoverArt") == 0)
    }

    @Test("--allow-env lets a profile read a variable by name, never one of the service's own")
    func allowEnv() async throws {
        let allowed = try await run(
            #"user = "alice", password_env = "SUBSONIC_PASSWORD""#, ids: ["al-1"],
            extra: ["--allow-env", "SUBSONIC_PASSWORD"], environment: ["SUBSONIC_PASSWORD": password])
        #expect(allowed.status == 0, "\(allowed.output)")
        let refused = try await run(
            #"user = "alice", password_env = "PIPELINEHOST_KEY""#, ids: ["al-1"],
            extra: ["--allow-env", "PIPELINEHOST_KEY"], environment: ["PIPELINEHOST_KEY": password])
        #expect(refused.status == 2)
        #expect(
            refused.stderr.contains("--allow-env PIPELINEHOST_KEY: the service's own secrets are never readable"),
            "\(refused.stderr)")
        #expect(server.requestCount("/rest/getCoverArt") == 1)
    }

    @Test("neither the password nor any token reaches the output, the stats or the files")
    func nothingLeaks() async throws {
        let outcome = try await run(#"user = "alice""#, ids: ["al-1", "al-2"], extra: ["--stats"])
        #expect(outcome.status == 0, "\(outcome.output)")
        let tokens = server.queries("/rest/getCoverArt").compactMap { SubsonicAuthCheck.parameters($0)["t"] }
        #expect(tokens.count == 2)
        let everything =
            outcome.output + directory.contents.joined()
            + ((try? FileManager.default.contentsOfDirectory(atPath: directory.file("out"))) ?? []).joined()
        for secret in [password] + tokens { #expect(!everything.contains(secret)) }
        #expect(outcome.stderr.contains("ok      \(server.url("/rest/getCoverArt?id=al-1")) -> "))
    }

    @Test("examples/subsonic.lua signs one transfer for both profiles of a stable URL")
    func example() async throws {
        server.route(
            "/music/rest/getCoverArt",
            .subsonic(
                user: "me", password: password,
                .ok(Fixtures.sample, contentType: "image/jpeg")))
        let outcome = try await CLIProcess.run(
            [
                "run", Fixtures.path("examples/subsonic.lua"), "--profile", "thumbnail",
                "--profile", "blurred-background", server.url("/music/rest/getCoverArt?id=al-42"),
                "--output-dir", directory.path,
            ], environment: environment)
        #expect(outcome.status == 0, "\(outcome.output)")
        let queries = server.queries("/music/rest/getCoverArt")
        #expect(queries.count == 1)
        #expect(queries.allSatisfy { SubsonicAuthCheck.valid(query: $0, user: "me", password: password) })
        #expect(directory.contents.filter { $0.hasPrefix("getCoverArt-") }.count == 2)
    }

    @Test("examples/subsonic.lua: a second run transfers nothing, and the cache holds no password, token or salt")
    func cacheHoldsNoSecret() async throws {
        server.route(
            "/music/rest/getCoverArt",
            .subsonic(
                user: "me", password: password,
                .ok(Fixtures.sample, contentType: "image/jpeg")))
        let cache = directory.file("cache")
        for _ in 0..<2 {
            let outcome = try await CLIProcess.run(
                [
                    "run", Fixtures.path("examples/subsonic.lua"), "--profile", "thumbnail",
                    "--profile", "blurred-background", server.url("/music/rest/getCoverArt?id=al-42"),
                    "--output-dir", directory.file("out"), "--cache-dir", cache,
                ], environment: environment)
            #expect(outcome.status == 0, "\(outcome.output)")
        }
        let queries = server.queries("/music/rest/getCoverArt")
        #expect(queries.count == 1)
        let parameters = SubsonicAuthCheck.parameters(queries[0])
        let secrets = [password, try #require(parameters["t"]), try #require(parameters["s"])]
        let files = try #require(FileManager.default.subpaths(atPath: cache)).filter { !$0.hasSuffix("/") }
        #expect(files.count >= 3)  // one original, two variants (plus their shard folders)
        for file in files {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: cache + "/" + file, isDirectory: &isDirectory),
                !isDirectory.boolValue
            else { continue }
            let bytes = try Fixtures.read(cache + "/" + file)
            for secret in secrets {
                #expect(
                    bytes.firstRange(of: Array(secret.utf8)) == nil && !file.contains(secret), "\(file) holds a secret")
            }
        }
    }

    @Test(
        "its parameters are checked when the profile loads",
        arguments: [
            (#"usr = "alice""#, "subsonic_auth: unknown parameter 'usr' (did you mean 'user'?)"),
            (
                "",
                "subsonic_auth: needs user, like subsonic_auth { user = \"me\" }; the password comes from $PIPELINEHOST_SECRET_SUBSONIC_PASSWORD"
            ),
            (#"user = "alice", method = "md5""#, #"subsonic_auth: 'method' must be one of "token"|"plain", got "md5""#),
        ])
    func parameters(_ auth: String, _ message: String) async throws {
        let check = try await CLIProcess.run(["check", try profile(auth)])
        #expect(check.status == 2)
        #expect(check.stderr.contains("subsonic.lua:3: " + message), "\(check.stderr)")
    }
}

/// Whether the query uses the plain form rather than a token.
private func usesPlainForm(_ query: String) -> Bool {
    let parameters = SubsonicAuthCheck.parameters(query)
    return parameters["p"]?.hasPrefix("enc:") == true && parameters["t"] == nil && parameters["s"] == nil
}
