import Benchmark
import FetchPlugin
import Foundation
import KeyNormalizePlugin
import PipelineHost
import PipelineProfiles
import VipsPlugin

/// What a request costs when the cache answers it, through the public API an app uses:
/// `Pipeline.image(for:)` on a memory hit, and `DiskCache.read` on a disk hit of a 50 KB entry.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal], maxDuration: .seconds(3), maxIterations: 100_000)

    Benchmark("memory hit (Pipeline.image)") { benchmark, fixture in
        for _ in benchmark.scaledIterations {
            blackHole(try await fixture.pipeline.image(for: fixture.request))
        }
    } setup: {
        try await MemoryHitFixture.make()
    }

    Benchmark("disk hit, 50 KB entry (DiskCache.read)") { benchmark, fixture in
        for _ in benchmark.scaledIterations {
            blackHole(fixture.cache.read(key: fixture.key))
        }
    } setup: {
        try DiskHitFixture.make()
    }
}

struct MemoryHitFixture: Sendable {
    let pipeline: Pipeline
    let request: ImageRequest

    /// A thumbnail profile whose variant is kept in memory, warmed with one file request.
    static func make() async throws -> MemoryHitFixture {
        let directory = NSTemporaryDirectory() + "pipelinehost-bench-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let image = directory + "/photo.jpg"
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../examples/sample.jpg").standardized
        try FileManager.default.copyItem(atPath: sample.path, toPath: image)
        let registry = try StageRegistry(plugins: [
            CachePlugin.self, FetchPlugin.self, KeyNormalizePlugin.self, VipsPlugin.self,
        ])
        let profiles = try ProfileLoader(registry: registry).load(
            code: Array(
                """
                profile "thumbnail" {
                  normalize { drop_query = { "s", "t" } }, fetch {}, decode {},
                  downsample { size = 300, fit = "cover" }, encode { format = "jpeg" }, cache { memory = true },
                }
                """.utf8), name: "bench.lua")
        let pipeline = Pipeline(
            profiles: profiles, configuration: PipelineConfiguration(cache: CacheSettings(directory: directory)))
        let request = ImageRequest(source: "file://" + image, profile: "thumbnail")
        _ = try await pipeline.image(for: request)
        return MemoryHitFixture(pipeline: pipeline, request: request)
    }
}

struct DiskHitFixture: Sendable {
    let cache: DiskCache
    let key: String

    static func make() throws -> DiskHitFixture {
        let directory = NSTemporaryDirectory() + "pipelinehost-bench-" + UUID().uuidString
        let cache = DiskCache(directory: directory)
        let bytes = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let entry = CacheEntry(
            image: EncodedImage(bytes: ImageBytes(copying: bytes), format: "jpeg"),
            storedAt: 0, expiresAt: 4_000_000_000)
        let key = "https://example.com/cover.jpg?id=1 | fetch@1() | decode@1() | encode@1(format=\"jpeg\")"
        try cache.write(entry, key: key, layer: .variant)
        return DiskHitFixture(cache: cache, key: key)
    }
}
