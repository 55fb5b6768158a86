import Foundation
import PipelineHost
import TestSupport
import Testing

/// Several processes on one cache directory keep to one size limit together: each counts the
/// others' writes through the directory's shared usage file.
@Suite("the disk cache's size limit across processes", .needs(.pixels, .process))
struct SharedCacheLimitTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    @Test("three processes writing at once stay within the limit")
    func threeWriters() async throws {
        let image = Fixtures.quadrants(width: 48, height: 32)
        var lists: [[String]] = [[], [], []]
        for n in 0..<240 {
            let path = directory.file("img-\(n).jpg")
            try Fixtures.write(path, image)
            lists[n % 3].append(path)
        }
        let profile = directory.file("limit.lua")
        try Fixtures.write(
            profile,
            Array(
                """
                profile "t" {
                  fetch {}, cache { disk = true }, decode {}, downsample { size = 16 }, encode {}, cache { memory = false, disk = true },
                }
                """.utf8))
        let cache = directory.file("cache"), limit = 40_000
        let disk = DiskCache(directory: cache)
        let watching = Locked((done: false, largest: 0, samples: 0))
        let watcher = Thread {
            while !watching.withLock({ $0.done }) {
                let bytes = disk.entryBytes
                watching.withLock {
                    $0.largest = max($0.largest, bytes); $0.samples += 1
                }
                usleep(2000)
            }
        }
        watcher.start()
        let running = try lists.enumerated().map { index, list in
            try CLIProcess.start(
                [
                    "run", profile, "--input-list", "-", "--output-dir", directory.file("out-\(index)"),
                    "--cache-dir", cache, "--cache-size", "\(limit)", "--no-progress",
                ],
                input: list.joined(separator: "\n") + "\n")
        }
        // Waiting blocks a thread: not one of the few that run every test's async work.
        let outcomes = try await BlockingExecutor.shared.run { try running.map { try $0.wait() } }
        watching.withLock { $0.done = true }
        while !watcher.isFinished { try await Task.sleep(for: .milliseconds(1)) }
        for outcome in outcomes { #expect(outcome.status == 0, "\(outcome.stderr.suffix(2000))") }

        let report = disk.report()
        let entry = try disk.entryPaths.map { try Fixtures.read($0).count }.max() ?? 0
        #expect(entry > 0 && report.entries > 5)
        #expect(report.bytes <= limit, "\(report.bytes) bytes in \(report.entries) entries")
        // Each writer reserves its entry's room before writing and counts the others'
        // reservations, so the directory never holds more than the limit. A listing is not
        // atomic: one that spans an eviction (a batch, down to 90%) can count the evicted entries
        // and those written after them, a tenth of the limit and one entry more. (A process that
        // kept its own count, as before, let each of the three fill the limit on its own:
        // samples of 50-100 KB.)
        let seen = watching.withLock { $0 }
        #expect(
            seen.largest <= limit + limit / 10 + entry,
            "the directory reached \(seen.largest) bytes in \(seen.samples) samples")
    }
}
