import FetchPlugin
import Foundation
import PipelineHost
import PipelineHostTransfer
import TestSupport
import Testing

/// Profiles with cache stages, run against the loopback server, with a disk cache directory of
/// the test's own. A new `Pipeline` on the same directory is what a new process sees.
@Suite("The cache stage: memory, then disk, then the network", .needs(.pixels, .network), .loopbackOrigin)
struct PipelineCacheTests {
    let server = LoopbackServer.fixture
    let directory: TemporaryDirectory
    let image = Fixtures.quadrants(width: 400, height: 300)

    init() throws {
        directory = try TemporaryDirectory()
        server.route("/cover.jpg", .ok(image, contentType: "image/jpeg"))
    }

    /// A thumbnail profile: the original on disk, then the variant where `variant` says.
    static func profile(
        original: String = "disk = true", variant: String? = "memory = true",
        name: String = "thumbnail", size: Int = 64
    ) -> String {
        """
        profile "\(name)" {
          normalize  { drop_query = { "u", "t", "s", "p" } },
          fetch      { timeout = 5, retry_delay = 0.01 },
          cache      { \(original) },
          decode     {},
          downsample { size = \(size), fit = "cover" },
          encode     { format = "jpeg" },\(variant.map { "\n  cache      { \($0) }," } ?? "")
        }
        """
    }

    func pipeline(_ lua: String = profile(), mode: CacheSettings.Mode = .normal, diskLimit: Int = 1 << 30) throws
        -> Pipeline
    {
        Pipeline(
            profiles: try TestPipeline.load(lua),
            configuration: TestPipeline.configuration(cacheIn: directory, mode: mode, diskLimit: diskLimit))
    }

    func request(_ path: String, profile: String = "thumbnail", overrides: [String: [String: ParameterValue]] = [:])
        -> ImageRequest
    {
        ImageRequest(source: server.url(path), profile: profile, overrides: overrides)
    }

    var disk: DiskCache { DiskCache(directory: directory.path) }

    @Test("a new pipeline on the same directory, with fresh salts, makes no transfer and gives the same bytes")
    func secondRun() async throws {
        let lua = Self.profile(variant: "memory = true, disk = true")
        let first = try pipeline(lua)
        let made = try await first.image(for: request("/cover.jpg?id=1&u=me&s=salt1&t=token1"))
        await first.flushCache()

        let second = try pipeline(lua)
        let served = try await second.image(for: request("/cover.jpg?id=1&u=me&s=salt2&t=token2"))
        #expect(server.requestCount("/cover.jpg") == 1)
        #expect(firstDifference(served.bytes, made.bytes) == nil)
        #expect(served.diskHit && !served.memoryHit && !served.stale && !made.diskHit)
        let stats = await second.stats()
        #expect((stats.fetches, stats.decodes, stats.diskHits) == (0, 0, 1))
        #expect(disk.report().originals == 1 && disk.report().variants == 1)
    }

    @Test("with only the original on disk, a new pipeline decodes again but does not download")
    func originalOnly() async throws {
        let first = try pipeline()
        _ = try await first.image(for: request("/cover.jpg"))
        await first.flushCache()
        let second = try pipeline()
        let served = try await second.image(for: request("/cover.jpg"))
        let stats = await second.stats()
        #expect(server.requestCount("/cover.jpg") == 1)
        #expect((stats.fetches, stats.decodes, stats.diskHits) == (0, 1, 1))
        #expect(served.diskHit && served.size == PixelSize(width: 64, height: 64))
    }

    @Test("a memory hit answers before the disk is looked at")
    func memoryFirst() async throws {
        let pipeline = try pipeline()
        let made = try await pipeline.image(for: request("/cover.jpg?s=1"))
        let before = await pipeline.stats()
        let served = try await pipeline.image(for: request("/cover.jpg?s=2"))
        let after = await pipeline.stats()
        #expect(served.memoryHit && !made.memoryHit)
        #expect(firstDifference(served.bytes, made.bytes) == nil)
        #expect(after.memoryHits == before.memoryHits + 1)
        #expect(after.diskLookups == before.diskLookups)
        #expect(served.timings.map(\.stage) == ["normalize", "cache"])
    }

    @Test("variants are keyed by every parameter that shaped them")
    func variantKeys() async throws {
        let pipeline = try pipeline()
        let large = try await pipeline.image(for: request("/cover.jpg"))
        let small = try await pipeline.image(
            for: request("/cover.jpg", overrides: ["downsample": ["size": .integer(32)]]))
        #expect(!small.memoryHit && small.size == PixelSize(width: 32, height: 32))
        let largeAgain = try await pipeline.image(for: request("/cover.jpg"))
        let smallAgain = try await pipeline.image(
            for: request("/cover.jpg", overrides: ["downsample": ["size": .integer(32)]]))
        #expect(largeAgain.memoryHit && smallAgain.memoryHit)
        #expect(
            firstDifference(largeAgain.bytes, large.bytes) == nil
                && firstDifference(smallAgain.bytes, small.bytes) == nil)
        #expect(server.requestCount("/cover.jpg") == 1)
    }

    @Test(
        "a corrupted entry is found by its checksum, removed, and fetched again",
        arguments: ["flip a byte", "truncate"])
    func corruption(_ damage: String) async throws {
        let first = try pipeline()
        let made = try await first.image(for: request("/cover.jpg"))
        await first.flushCache()
        let file = try #require(disk.entryPaths.first)
        var bytes = try Fixtures.read(file)
        if damage == "truncate" { bytes.removeLast(bytes.count / 2) } else { bytes[bytes.count - 10] ^= 0xFF }
        try Fixtures.write(file, bytes)

        let second = try pipeline()
        let served = try await second.image(for: request("/cover.jpg"))
        await second.flushCache()
        #expect(server.requestCount("/cover.jpg") == 2)
        #expect(firstDifference(served.bytes, made.bytes) == nil && !served.diskHit)
        #expect(await second.stats().corruptEntries == 1)
        let verified = disk.verify()
        #expect((verified.checked, verified.corruptRemoved) == (1, 0))
    }

    @Test("the size limit holds while 500 distinct entries stream through")
    func sizeLimit() async throws {
        let small = Fixtures.quadrants(width: 48, height: 32)
        for n in 0..<500 { server.route("/img/\(n).jpg", .ok(small, contentType: "image/jpeg")) }
        let limit = 40_000
        let pipeline = try pipeline(Self.profile(variant: nil, size: 16), diskLimit: limit)
        let cache = disk
        let watching = Locked((done: false, largest: 0, samples: 0))
        let watcher = Task.detached {
            while !watching.withLock({ $0.done }) {
                let bytes = cache.entryBytes
                watching.withLock {
                    $0.largest = max($0.largest, bytes); $0.samples += 1
                }
                try? await Task.sleep(for: .milliseconds(2))
            }
        }
        try await Self.runAll((0..<500).map { request("/img/\($0).jpg") }, in: pipeline, window: 16)
        await pipeline.flushCache()
        watching.withLock { $0.done = true }
        await watcher.value
        let report = disk.report()
        let stats = await pipeline.stats()
        #expect(stats.diskWrites == 500 && stats.succeeded == 500)
        #expect(report.bytes <= limit && report.entries > 5 && report.entries < 500)
        let seen = watching.withLock { $0 }
        // A listing is not atomic: a sample that spans one eviction (a batch, down to 90%) can count
        // the evicted entries and those written after them in shards it lists later. So the bound
        // a sample can show is a tenth of the limit and one entry more. An entry is the body plus
        // its metadata, which holds the key (every stage parameter), so its size is read from the
        // disk rather than guessed.
        let entry = try disk.entryPaths.map { try Fixtures.read($0).count }.max() ?? 0
        #expect(entry > small.count)
        #expect(
            seen.largest <= limit + limit / 10 + entry,
            "the directory reached \(seen.largest) bytes in \(seen.samples) samples")
        #expect(seen.samples > 10)
    }

    @Test("a stale original is revalidated, and a 304 reuses the stored bytes")
    func revalidation() async throws {
        server.route("/etag.jpg", .cacheable(image, etag: "\"v1\"", cacheControl: "max-age=0"))
        let pipeline = try pipeline(Self.profile(variant: nil))
        let made = try await pipeline.image(for: request("/etag.jpg"))
        await pipeline.flushCache()
        let again = try await pipeline.image(for: request("/etag.jpg"))
        #expect(server.requestCount("/etag.jpg") == 2 && server.notModifiedCount("/etag.jpg") == 1)
        #expect(server.requestHeaders("/etag.jpg").last?["if-none-match"] == "\"v1\"")
        #expect(firstDifference(again.bytes, made.bytes) == nil && !again.stale)
        let stats = await pipeline.stats()
        #expect(stats.revalidated == 1 && stats.bytesFetched == image.count)
    }

    @Test("when revalidation fails, on_error = \"stale\" serves the last good image, flagged; \"fail\" is an error")
    func lastGoodImage() async throws {
        server.route("/flaky.jpg", .cacheable(image, etag: "\"v1\"", cacheControl: "max-age=0"))
        let lua =
            Self.profile(original: #"disk = true, on_error = "stale""#, variant: nil, name: "lenient")
            + "\n" + Self.profile(variant: nil, name: "strict")
        let pipeline = try pipeline(lua)
        let made = try await pipeline.image(for: request("/flaky.jpg", profile: "lenient"))
        await pipeline.flushCache()
        server.route("/flaky.jpg", .status(500))

        let served = try await pipeline.image(for: request("/flaky.jpg", profile: "lenient"))
        #expect(served.stale && firstDifference(served.bytes, made.bytes) == nil)
        let failure = await #expect(throws: PipelineError.self) {
            try await pipeline.image(for: request("/flaky.jpg", profile: "strict"))
        }
        #expect(failure?.kind == .httpStatus && failure?.httpStatus == 500)
        let stats = await pipeline.stats()
        #expect((stats.staleServed, stats.staleResults, stats.failed) == (1, 1, 1))
        // The first fetch, then each failing revalidation: one attempt and two retries.
        #expect(server.requestCount("/flaky.jpg") == 7)
    }

    @Test("Cache-Control max-age and Expires win over ttl; without them, ttl decides")
    func freshness() async throws {
        server.route("/long.jpg", .headers(["Cache-Control": "max-age=3600"], .ok(image, contentType: "image/jpeg")))
        let now = Date()
        server.route(
            "/expires.jpg",
            .headers(
                ["Date": Self.httpDate(now), "Expires": Self.httpDate(now + 3600)],
                .ok(image, contentType: "image/jpeg")))
        server.route(
            "/expired.jpg",
            .headers(
                ["Date": Self.httpDate(now), "Expires": Self.httpDate(now - 60)],
                .ok(image, contentType: "image/jpeg")))
        let lua = Self.profile(original: "disk = true, ttl = 0", variant: nil)
        for _ in 0..<2 {
            let pipeline = try pipeline(lua)
            for path in ["/long.jpg", "/expires.jpg", "/expired.jpg", "/cover.jpg"] {
                _ = try await pipeline.image(for: request(path))
            }
            await pipeline.flushCache()
        }
        #expect(server.requestCount("/long.jpg") == 1 && server.requestCount("/expires.jpg") == 1)
        #expect(server.requestCount("/expired.jpg") == 2 && server.requestCount("/cover.jpg") == 2)
    }

    @Test("a profile's dir is relative to the profile file; --cache-dir (CacheSettings.directory) wins")
    func profileDirectory() async throws {
        let file = try directory.write(
            "covers.lua", Array(Self.profile(original: #"disk = true, dir = "my-cache""#, variant: nil).utf8))
        let own = Pipeline(profiles: try ProfileLoader(registry: TestPipeline.registry()).load(file: file))
        _ = try await own.image(for: request("/cover.jpg"))
        await own.flushCache()
        #expect(DiskCache(directory: directory.file("my-cache")).report().originals == 1)

        let overridden = Pipeline(
            profiles: try ProfileLoader(registry: TestPipeline.registry()).load(file: file),
            configuration: TestPipeline.configuration(cacheIn: directory))
        _ = try await overridden.image(for: request("/cover.jpg"))
        await overridden.flushCache()
        #expect(disk.report().originals == 1)
    }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    @Test("Cache-Control: no-store keeps nothing, in memory or on disk")
    func noStore() async throws {
        server.route("/private.jpg", .headers(["Cache-Control": "no-store"], .ok(image, contentType: "image/jpeg")))
        let pipeline = try pipeline()
        _ = try await pipeline.image(for: request("/private.jpg"))
        await pipeline.flushCache()
        let again = try await pipeline.image(for: request("/private.jpg"))
        #expect(!again.memoryHit && !again.diskHit)
        #expect(server.requestCount("/private.jpg") == 2)
        #expect(disk.report().entries == 0)
    }

    @Test("errors and non-images are never stored", arguments: ["html", "404", "truncated"])
    func neverCached(_ kind: String) async throws {
        switch kind {
        case "html": server.route("/bad", .ok(Array("<html><body>login</body></html>".utf8), contentType: "image/jpeg"))
        case "404": server.route("/bad", .status(404))
        default: server.route("/bad", .ok(Array(image.prefix(image.count / 2)), contentType: "image/jpeg"))
        }
        let pipeline = try pipeline()
        for _ in 0..<2 {
            await #expect(throws: PipelineError.self) { try await pipeline.image(for: request("/bad")) }
            await pipeline.flushCache()
        }
        #expect(server.requestCount("/bad") == 2)
        #expect(disk.report().entries == 0)
    }

    @Test("offline: stored entries are served (stale ones flagged), and a missing one is not_cached without a transfer")
    func offline() async throws {
        server.route("/old.jpg", .cacheable(image, etag: "\"v1\"", cacheControl: "max-age=0"))
        let online = try pipeline(Self.profile(variant: nil))
        _ = try await online.image(for: request("/cover.jpg"))
        _ = try await online.image(for: request("/old.jpg"))
        await online.flushCache()

        let offline = try pipeline(Self.profile(variant: nil), mode: .offline)
        let fresh = try await offline.image(for: request("/cover.jpg"))
        let stale = try await offline.image(for: request("/old.jpg"))
        #expect(fresh.diskHit && !fresh.stale && stale.stale)
        let missing = await #expect(throws: PipelineError.self) {
            try await offline.image(for: request("/missing.jpg?t=secret"))
        }
        #expect(missing?.kind == .notCached)
        #expect(
            missing?.description == server.url("/missing.jpg?t=REDACTED")
                + ": not in the cache, and the pipeline is offline")
        #expect(server.requestCount("/missing.jpg") == 0 && server.requestCount("/old.jpg") == 1)
    }

    @Test("refresh revalidates a fresh original and remakes the variant")
    func refresh() async throws {
        server.route("/etag.jpg", .cacheable(image, etag: "\"v2\"", cacheControl: "max-age=3600"))
        let first = try pipeline(Self.profile(variant: "memory = true, disk = true"))
        _ = try await first.image(for: request("/etag.jpg"))
        await first.flushCache()
        let refreshing = try pipeline(Self.profile(variant: "memory = true, disk = true"), mode: .refresh)
        let served = try await refreshing.image(for: request("/etag.jpg"))
        #expect(!served.diskHit)
        #expect(server.notModifiedCount("/etag.jpg") == 1)
        #expect(await refreshing.stats().revalidated == 1)
    }

    @Test("--no-cache mode neither looks nor stores")
    func off() async throws {
        let pipeline = try pipeline(mode: .off)
        _ = try await pipeline.image(for: request("/cover.jpg"))
        let again = try await pipeline.image(for: request("/cover.jpg"))
        await pipeline.flushCache()
        #expect(!again.memoryHit && server.requestCount("/cover.jpg") == 2)
        #expect(disk.report().entries == 0)
        #expect(await pipeline.stats().memoryLookups == 0)
    }

    @Test("a cache directory that cannot be written costs the cache, never the request")
    func unwritable() async throws {
        // Under a regular file, so mkdir fails even for root (who ignores permission bits).
        let blocker = try directory.write("not-a-directory", [1, 2, 3])
        let pipeline = Pipeline(
            profiles: try TestPipeline.load(Self.profile(variant: nil)),
            configuration: PipelineConfiguration(cache: CacheSettings(directory: blocker + "/cache")))
        let result = try await pipeline.image(for: request("/cover.jpg"))
        await pipeline.flushCache()
        #expect(result.size == PixelSize(width: 64, height: 64))
        let stats = await pipeline.stats()
        #expect((stats.diskWrites, stats.diskWriteErrors, stats.succeeded) == (0, 1, 1))
    }

    @Test("a prefetch fills the cache: the real request later is a memory hit")
    func prefetchWarms() async throws {
        let pipeline = try pipeline()
        #expect(await pipeline.prefetch([request("/cover.jpg?s=1")]).wait() == 1)
        let result = try await pipeline.image(for: request("/cover.jpg?s=2"))
        #expect(result.memoryHit && server.requestCount("/cover.jpg") == 1)
    }

    /// Runs `requests` with at most `window` at once.
    static func runAll(_ requests: [ImageRequest], in pipeline: Pipeline, window: Int) async throws {
        for outcome in await TestPipeline.outcomes(requests, in: pipeline, window: window) { _ = try outcome.get() }
    }
}
