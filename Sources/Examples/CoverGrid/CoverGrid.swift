// An app's cover grid, as an embedder uses the library: a pipeline shared by the whole app,
// covers prefetched at low priority ahead of the scroll, requests cancelled when their cells
// scroll away, and the last good blurred background kept on screen while the next one loads.
//
//   swift run pipelinehost-cover-grid-example [IMAGE]      (default: examples/sample.jpg)
//
// It runs on local files, so it needs no network: each "album" is a copy of IMAGE.
import FetchPlugin
import Foundation
import KeyNormalizePlugin
import PipelineHost
import PipelineProfiles
import VipsPlugin

/// The app's profiles: small covers for the grid, and a blurred background for the player.
let profileText = """
    profile "cover" {
      fetch {}, cache { disk = true }, decode {}, downsample { size = 160, fit = "cover" },
      encode { format = "jpeg", quality = 80 }, cache { memory = true },
    }
    profile "background" {
      fetch {}, cache { disk = true }, decode {}, downsample { size = 256 },
      blur { sigma = 8, dim = 0.3 }, encode { format = "jpeg", quality = 70 }, cache { memory = true, on_error = "stale" },
    }
    """

@main
enum CoverGrid {
    static func main() async throws {
        let image = CommandLine.arguments.dropFirst().first ?? "examples/sample.jpg"
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("cover-grid-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        let albums = try makeAlbums(from: image, count: 24, in: work.appendingPathComponent("albums"))
        let cache = work.appendingPathComponent("cache").path

        // One pipeline for the whole app: shared work, one memory cache, one disk cache.
        let registry = try StageRegistry(plugins: [
            CachePlugin.self, FetchPlugin.self, KeyNormalizePlugin.self, VipsPlugin.self,
        ])
        let profiles = try ProfileLoader(registry: registry).load(code: Array(profileText.utf8), name: "app.lua")
        let pipeline = Pipeline(
            profiles: profiles, configuration: PipelineConfiguration(cache: CacheSettings(directory: cache)))

        // 1. The first screen shows cells 0-7. Cells 8-15 are prefetched at low priority: they
        //    will be cache hits when the user scrolls to them.
        let visible = try await covers(albums[0..<8], in: pipeline)
        print("screen 1: \(visible.count) covers, \(visible.filter(\.coalesced).count) shared with other requests")
        let prefetch = pipeline.prefetch(albums[8..<16].map { ImageRequest(source: $0, profile: "cover") })
        print("prefetched: \(await prefetch.wait()) covers at low priority")

        // 2. The user scrolls to cells 8-15: every cover is a memory hit.
        let second = try await covers(albums[8..<16], in: pipeline)
        print("screen 2: \(second.filter(\.memoryHit).count) of \(second.count) covers from memory")

        // 3. A fling: cells 16-23 start loading, then scroll away at once. Cancelling a cell's
        //    task cancels its request; work nobody else waits for stops.
        let cells = albums[16..<24].map { source in
            Task { try await pipeline.image(for: ImageRequest(source: source, profile: "cover"), priority: .high) }
        }
        for cell in cells { cell.cancel() }
        var cancelled = 0
        for cell in cells {
            do { _ = try await cell.value } catch let error as PipelineError where error.kind == .cancelled {
                cancelled += 1
            }
        }
        print("fling: \(cancelled) of \(cells.count) cells scrolled away before their covers were made")

        // 4. The player's background: the last good one stays on screen while the next loads,
        //    and a failed load keeps it (on_error = "stale" serves the last stored one, too).
        var background = try await pipeline.image(for: ImageRequest(source: albums[0], profile: "background"))
        print("background: album 0, \(background.size.map { "\($0)" } ?? "?")")
        let next = Task { try await pipeline.image(for: ImageRequest(source: albums[1], profile: "background")) }
        print("loading album 1's background; still showing \(background.bytes.count) bytes of album 0's")
        background = try await next.value
        print("background: album 1, \(background.size.map { "\($0)" } ?? "?")")
        do {
            _ = try await pipeline.image(for: ImageRequest(source: albums[0] + ".missing", profile: "background"))
        } catch {
            print("a background that fails to load leaves album 1's on screen: \(error)")
        }

        await pipeline.flushCache()
        let stats = await pipeline.stats()
        print(
            "stats: \(stats.requests) requests, \(stats.fetches) fetches, \(stats.decodes) decodes, "
                + "\(stats.memoryHits) memory hits, \(stats.cancelled) cancelled")
    }

    /// Loads one screen of covers at once, as a grid's visible cells do.
    static func covers(_ sources: ArraySlice<String>, in pipeline: Pipeline) async throws -> [PipelineResult] {
        try await withThrowingTaskGroup(of: PipelineResult.self) { group in
            for source in sources {
                group.addTask {
                    try await pipeline.image(for: ImageRequest(source: source, profile: "cover"), priority: .high)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// Copies of `image`, one file per album, in `directory`.
    static func makeAlbums(from image: String, count: Int, in directory: URL) throws -> [String] {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: image))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try (0..<count).map { index in
            let path = directory.appendingPathComponent("album-\(index).jpg").path
            try bytes.write(to: URL(fileURLWithPath: path))
            return path
        }
    }
}
