import Foundation
import TestSupport
import Testing

@Suite(
    "pipelinehost cache: maintenance never follows a symlink out of the cache", .needs(.pixels, .process))
struct CacheSymlinkTests {
    let directory: TemporaryDirectory
    var cache: String { directory.file("cache") }
    var outside: String { directory.file("outside") }

    init() throws { directory = try TemporaryDirectory() }

    /// A cache with one real entry, plus a shard, an entry-named file, `tmp` and a temporary-
    /// named file that are symlinks to files and directories outside the cache, each holding
    /// what a careless walk would take for corrupt entries or abandoned temporaries.
    private func plantedCache() async throws -> [String] {
        let fm = FileManager.default
        let run = try await CLIProcess.run([
            "run", Fixtures.path("examples/thumbnail.lua"), Fixtures.path("examples/sample.jpg"),
            "--output-dir", directory.file("out"), "--cache-dir", cache,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let entries = cache + "/entries"
        let shards = try fm.contentsOfDirectory(atPath: entries)
        let real = try #require(shards.first)
        let entryName = try #require(try fm.contentsOfDirectory(atPath: entries + "/" + real).first)
        // Names are hashes of the sample's absolute path, so every planted name is chosen to
        // differ from what is there, whatever the checkout path made.
        let fakeShard = try #require(Self.hexPairs.first { !shards.contains($0) })
        let fakeLast: Character = entryName.last == "f" ? "e" : "f"
        // Outside: a directory laid out like a shard, a lone file, a directory like tmp.
        let fakeName = fakeShard + String(repeating: "0", count: 62)
        try fm.createDirectory(atPath: outside + "/shard", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: outside + "/tmp", withIntermediateDirectories: true)
        let victims = [outside + "/shard/" + fakeName, outside + "/lone", outside + "/tmp/\(fakeName).1.2"]
        for victim in victims { try Data("not an entry".utf8).write(to: URL(fileURLWithPath: victim)) }
        let old = Date(timeIntervalSinceNow: -7200)
        try fm.setAttributes([.modificationDate: old], ofItemAtPath: victims[2])
        try fm.createSymbolicLink(atPath: entries + "/" + fakeShard, withDestinationPath: outside + "/shard")
        try fm.createSymbolicLink(
            atPath: entries + "/" + real + "/" + real + String(repeating: "1", count: 62),
            withDestinationPath: outside + "/lone")
        try fm.createSymbolicLink(
            atPath: entries + "/" + real + "/" + String(entryName.dropLast()) + String(fakeLast),
            withDestinationPath: outside + "/lone")
        try fm.createDirectory(atPath: cache + "/tmp", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: cache + "/tmp/\(fakeName).3.4", withDestinationPath: outside + "/lone")
        return victims
    }

    private static let hexPairs = ["ab", "cd", "ef", "01"]

    @Test(
        "verify, prune and clear leave symlinks and their targets alone",
        arguments: [
            ["verify"], ["prune", "--max-size", "1"], ["clear"], ["stats"],
        ])
    func maintenance(_ command: [String]) async throws {
        let victims = try await plantedCache()
        let run = try await CLIProcess.run(["cache"] + command + ["--cache-dir", cache])
        #expect(run.status == 0, "\(run.stderr)")
        for victim in victims {
            #expect(FileManager.default.fileExists(atPath: victim), "\(command[0]) removed \(victim)")
        }
    }

    @Test("a symlinked entries directory is not walked, and a run still works")
    func symlinkedEntries() async throws {
        let fm = FileManager.default
        let fakeName = "cd" + String(repeating: "0", count: 62)
        try fm.createDirectory(atPath: outside + "/entries/cd", withIntermediateDirectories: true)
        let victim = outside + "/entries/cd/" + fakeName
        try Data("not an entry".utf8).write(to: URL(fileURLWithPath: victim))
        try fm.createDirectory(atPath: cache, withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: cache + "/entries", withDestinationPath: outside + "/entries")
        for command in [["verify"], ["clear"]] {
            let run = try await CLIProcess.run(["cache"] + command + ["--cache-dir", cache])
            #expect(run.status == 0, "\(run.stderr)")
        }
        let run = try await CLIProcess.run([
            "run", Fixtures.path("examples/thumbnail.lua"), Fixtures.path("examples/sample.jpg"),
            "--output-dir", directory.file("out"), "--cache-dir", cache,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(fm.fileExists(atPath: victim))
        #expect(
            try fm.contentsOfDirectory(atPath: outside + "/entries/cd") == [fakeName], "nothing was written through it")
    }
}
