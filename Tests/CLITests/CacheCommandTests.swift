import Foundation
import TestSupport
import Testing

@Suite(
    "the disk cache across runs, and pipelinehost cache, as a subprocess", .needs(.pixels, .network, .process),
    .loopbackOrigin)
struct CacheCommandTests {
    let server = LoopbackServer.fixture
    let directory: TemporaryDirectory
    let thumbnail = Fixtures.path("examples/thumbnail.lua")
    var cache: String { directory.file("cache") }

    init() throws {
        directory = try TemporaryDirectory()
        for id in 1...40 {
            server.route(
                "/covers/\(id).jpg",
                .ok(Fixtures.quadrants(width: 400 + id * 10, height: 300), contentType: "image/jpeg"))
        }
    }

    private func urls(_ ids: ClosedRange<Int>, salt: String) -> [String] {
        ids.map { server.url("/covers/\($0).jpg?id=\($0)&u=me&s=\(salt)-\($0)&t=token-\(salt)-\($0)") }
    }

    private func stats(_ stdout: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
    }

    private func files(in path: String) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
            files[name] = try Fixtures.read(path + "/" + name)
        }
        return files
    }

    @Test("a second run with fresh salts makes no transfer and writes the same bytes")
    func secondRun() async throws {
        let first = try await CLIProcess.run(
            ["run", thumbnail] + urls(1...6, salt: "a")
                + ["--output-dir", directory.file("first"), "--cache-dir", cache, "--stats"])
        let second = try await CLIProcess.run(
            ["run", thumbnail] + urls(1...6, salt: "b")
                + ["--output-dir", directory.file("second"), "--cache-dir", cache, "--stats"])
        #expect(first.status == 0 && second.status == 0, "\(first.stderr)\(second.stderr)")
        #expect((1...6).allSatisfy { server.requestCount("/covers/\($0).jpg") == 1 })
        let figures = try stats(second.stdout)
        #expect(figures["fetches"] as? Int == 0 && figures["decodes"] as? Int == 0 && figures["disk_hits"] as? Int == 6)
        let written = try files(in: directory.file("first"))
        #expect(written.count == 6)
        #expect(try files(in: directory.file("second")) == written)
        #expect(second.stderr.components(separatedBy: "(disk cache)").count - 1 == 6)
    }

    @Test("--offline names every source that is not cached, exits 1, and transfers nothing")
    func offline() async throws {
        let warm = try await CLIProcess.run([
            "run", thumbnail, urls(1...1, salt: "a")[0], "--output-dir", directory.path, "--cache-dir", cache,
        ])
        #expect(warm.status == 0, "\(warm.stderr)")
        let run = try await CLIProcess.run(
            ["run", thumbnail] + urls(1...3, salt: "b")
                + ["--output-dir", directory.path, "--cache-dir", cache, "--offline"])
        #expect(run.status == 1)
        for id in 2...3 {
            #expect(
                run.stderr.contains(
                    "failed  \(server.url("/covers/\(id).jpg?id=\(id)&u=REDACTED&s=REDACTED&t=REDACTED")): not in the cache, and the pipeline is offline"
                ),
                "\(run.stderr)")
            #expect(server.requestCount("/covers/\(id).jpg") == 0)
        }
        #expect(run.stdout.contains("ok      \(server.url("/covers/1.jpg"))"), "\(run.stdout)")
    }

    @Test("two processes filling one cache at once leave no corrupt entry; stats, prune and clear")
    func twoProcesses() async throws {
        let a = try CLIProcess.start(
            ["run", thumbnail] + urls(1...30, salt: "a")
                + ["--output-dir", directory.file("a"), "--cache-dir", cache, "--jobs", "4"])
        let b = try CLIProcess.start(
            ["run", thumbnail] + urls(11...40, salt: "b").reversed()
                + ["--output-dir", directory.file("b"), "--cache-dir", cache, "--jobs", "4"])
        let (ranA, ranB) = (try await a.finished(), try await b.finished())
        #expect(ranA.status == 0 && ranB.status == 0, "\(ranA.stderr)\(ranB.stderr)")

        let verify = try await CLIProcess.run(["cache", "verify", "--cache-dir", cache])
        #expect(verify.status == 0)
        #expect(verify.stdout.contains("checked: 80\ncorrupt: 0 (removed)"), "\(verify.stdout)")
        let stats = try await CLIProcess.run(["cache", "stats", "--cache-dir", cache])
        #expect(stats.stdout.contains("entries: 80 (40 originals, 40 variants)"), "\(stats.stdout)")
        #expect(stats.stdout.contains("cache directory: \(cache)"))

        let prune = try await CLIProcess.run(["cache", "prune", "--cache-dir", cache, "--max-size", "100K"])
        #expect(prune.status == 0, "\(prune.output)")
        let left = DiskCacheFiles(cache)
        #expect(left.bytes <= 100 * 1024 && left.count < 80 && left.count > 0)
        #expect(prune.stdout.contains("removed: \(80 - left.count) entries"), "\(prune.stdout)")
        let clear = try await CLIProcess.run(["cache", "clear", "--cache-dir", cache])
        #expect(clear.stdout.contains("removed: \(left.count) entries"))
        #expect(DiskCacheFiles(cache).count == 0)
    }

    @Test("cache verify removes an entry whose bytes were damaged")
    func verifyFindsDamage() async throws {
        let run = try await CLIProcess.run([
            "run", thumbnail, urls(1...1, salt: "a")[0], "--output-dir", directory.path, "--cache-dir", cache,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let path = try #require(DiskCacheFiles(cache).paths.first)
        var bytes = try Fixtures.read(path)
        bytes[bytes.count / 2] ^= 0x55
        try Fixtures.write(path, bytes)
        let verify = try await CLIProcess.run(["cache", "verify", "--cache-dir", cache])
        #expect(verify.stdout.contains("checked: 2\ncorrupt: 1 (removed)"), "\(verify.stdout)")
        #expect(DiskCacheFiles(cache).count == 1)
    }

    @Test("--no-cache, --refresh and --offline exclude each other; sizes are checked")
    func flags() async throws {
        let both = try await CLIProcess.run(["run", thumbnail, "x.jpg", "--offline", "--refresh"])
        #expect(both.status == 2 && both.stderr.contains("use one of --no-cache, --refresh and --offline"))
        let size = try await CLIProcess.run(["run", thumbnail, "x.jpg", "--cache-size", "lots"])
        #expect(size.status == 2 && size.stderr.contains("--cache-size"), "\(size.stderr)")
    }
}

/// The entry files of a cache directory, counted from outside the tool.
struct DiskCacheFiles {
    let paths: [String]
    let bytes: Int

    init(_ directory: String) {
        let entries = directory + "/entries"
        let shards = (try? FileManager.default.contentsOfDirectory(atPath: entries)) ?? []
        paths = shards.flatMap { shard in
            ((try? FileManager.default.contentsOfDirectory(atPath: entries + "/" + shard)) ?? []).map {
                "\(entries)/\(shard)/\($0)"
            }
        }
        bytes = paths.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0) }
    }

    var count: Int { paths.count }
}
