import Foundation
import PipelineHost
import TestSupport
import Testing

/// A Subsonic server answers cover art with `Cache-Control: no-cache` and an ETag: every request
/// must revalidate, and almost every answer is 304. A 304 proves the original unchanged, so the
/// variants made from it still hold: they serve again with nothing decoded, and the stored
/// entries get new freshness in place.
@Suite("A 304 keeps the variants made from the original", .needs(.pixels, .network), .loopbackOrigin)
struct RevalidatedVariantTests {
    let server = LoopbackServer.fixture
    let directory: TemporaryDirectory
    let image = Fixtures.quadrants(width: 400, height: 300)

    init() throws {
        directory = try TemporaryDirectory()
        server.route("/cover.jpg", .cacheable(image, etag: "\"v1\"", cacheControl: "no-cache"))
    }

    /// `examples/subsonic.lua`'s two profiles and caches, without the signer.
    static let lua = """
        local original = cache { disk = true, on_error = "stale" }
        local variant = cache { memory = true, disk = true, on_error = "stale" }
        profile "thumbnail" {
          fetch {}, original, decode {}, downsample { size = 64, fit = "cover" }, encode { format = "jpeg" }, variant,
        }
        profile "blurred-background" {
          fetch {}, original, decode {}, downsample { size = 96 }, blur { sigma = 4, dim = 0.35 }, encode { format = "jpeg" }, variant,
        }
        """

    func pipeline() throws -> Pipeline {
        Pipeline(
            profiles: try TestPipeline.load(Self.lua), configuration: TestPipeline.configuration(cacheIn: directory))
    }

    func both(_ pipeline: Pipeline) async throws -> [PipelineResult] {
        var results: [PipelineResult] = []
        for profile in ["thumbnail", "blurred-background"] {
            results.append(
                try await pipeline.image(for: ImageRequest(source: server.url("/cover.jpg"), profile: profile)))
        }
        await pipeline.flushCache()
        return results
    }

    /// Entry file name to inode: a file rewritten through rename gets a new inode.
    func inodes() throws -> [String: Int] {
        var found: [String: Int] = [:]
        let entries = directory.path + "/entries"
        for shard in try FileManager.default.contentsOfDirectory(atPath: entries) {
            for name in try FileManager.default.contentsOfDirectory(atPath: entries + "/" + shard) {
                let attributes = try FileManager.default.attributesOfItem(atPath: entries + "/" + shard + "/" + name)
                found[name] = (attributes[.systemFileNumber] as? NSNumber)?.intValue
            }
        }
        return found
    }

    @Test("a second run revalidates and decodes nothing; no entry's bytes are rewritten")
    func secondRun() async throws {
        let made = try await both(try pipeline())
        let before = try inodes()
        #expect(before.count == 3, "one original and two variants")

        let (asked, confirmed) = (server.requestCount("/cover.jpg"), server.notModifiedCount("/cover.jpg"))
        let second = try pipeline()
        let served = try await both(second)
        // One after the other, each request revalidates the no-cache original itself.
        #expect(
            server.requestCount("/cover.jpg") - asked == 2 && server.notModifiedCount("/cover.jpg") - confirmed == 2)
        #expect(served.map(\.bytes.array) == made.map(\.bytes.array))
        #expect(served.allSatisfy { !$0.stale })
        let stats = await second.stats()
        #expect(stats.decodes == 0)
        #expect(stats.revalidatedVariants == 2)
        #expect((stats.diskWrites, stats.diskRefreshes) == (0, 4), "the original twice, each variant once")
        #expect(try inodes() == before, "refreshed in place")

        // The refreshed freshness is what a third run reads: still no decode.
        let third = try pipeline()
        _ = try await both(third)
        #expect(await third.stats().decodes == 0)
    }

    @Test("in one pipeline, each request revalidates and the variant in memory serves again")
    func samePipeline() async throws {
        let pipeline = try pipeline()
        let first = try await pipeline.image(for: ImageRequest(source: server.url("/cover.jpg"), profile: "thumbnail"))
        await pipeline.flushCache()
        for _ in 0..<3 {
            let again = try await pipeline.image(
                for: ImageRequest(source: server.url("/cover.jpg"), profile: "thumbnail"))
            #expect(firstDifference(again.bytes, first.bytes) == nil)
        }
        #expect(server.notModifiedCount("/cover.jpg") == 3, "no-cache: every request asks the origin")
        let stats = await pipeline.stats()
        #expect(stats.decodes == 1)
        #expect(stats.revalidatedVariants == 3)
    }

    @Test("a changed original (a new ETag) makes the variants again")
    func changedOriginal() async throws {
        let made = try await both(try pipeline())
        server.route(
            "/cover.jpg",
            .cacheable(Fixtures.quadrants(width: 300, height: 400), etag: "\"v2\"", cacheControl: "no-cache"))
        let confirmed = server.notModifiedCount("/cover.jpg")
        let second = try pipeline()
        let served = try await both(second)
        let stats = await second.stats()
        #expect(
            server.notModifiedCount("/cover.jpg") - confirmed == 1, "the second profile's request found v2 unchanged")
        #expect(stats.decodes == 2, "but its variant was made from v1")
        #expect(stats.revalidatedVariants == 0)
        #expect(served[0].bytes.array != made[0].bytes.array)
    }

    @Test("a refresh rewrites only the freshness block; a torn one falls back to the written freshness")
    func freshnessInPlace() throws {
        let disk = DiskCache(directory: directory.path)
        let entry = CacheEntry(
            image: EncodedImage(bytes: ImageBytes(copying: image), format: "jpeg"), storedAt: 1000, expiresAt: 2000)
        try disk.write(entry, key: "k", layer: .original)
        #expect(disk.refresh(key: "k", storedAt: 3000, expiresAt: 4000))
        guard case .hit(let refreshed) = disk.read(key: "k") else { Issue.record("not read back"); return }
        #expect((refreshed.storedAt, refreshed.expiresAt) == (3000, 4000))
        #expect(firstDifference(refreshed.image.bytes, image) == nil)

        // "PHCACHE2", the metadata length and the SHA-256 come first: the block starts at 44.
        let (name, _) = try #require(try inodes().first)
        let path = directory.path + "/entries/" + name.prefix(2) + "/" + name
        var file = try #require(FileManager.default.contents(atPath: path))
        file[44 + 9] ^= 0xFF
        try file.write(to: URL(fileURLWithPath: path))
        guard case .hit(let torn) = disk.read(key: "k") else {
            Issue.record("a torn freshness block is not corruption"); return
        }
        #expect((torn.storedAt, torn.expiresAt) == (1000, 2000))
        #expect(!disk.refresh(key: "missing", storedAt: 0, expiresAt: 0))
    }
}
