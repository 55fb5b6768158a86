import ArgumentParser
import Foundation
import Glibc
import PipelineHost
import TestSupport
import VipsPlugin

/// Runs thousands of mixed requests, some of them bad, through one Pipeline, and checks that
/// memory stops growing once warm, that nothing is left in flight and that libvips holds no
/// images afterwards. scripts/soak runs it; scripts/test runs it too.
@main
struct Soak: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipelinehost-soak",
        abstract: "Soak test: mixed good and bad requests through one Pipeline; fails on memory growth or leaks.")

    @Option(help: "Requests measured after the warm-up.")
    var requests = 2000

    @Option(help: "Share of bad requests, 0...1.")
    var bad = 0.2

    @Option(
        help: "Requests run first to warm up (caches fill, threads start); resident memory is compared from their end.")
    var warmup = 1000

    @Option(help: "Requests in progress at once.")
    var concurrency = 16

    @Option(help: "Largest RSS growth after warm-up allowed, in percent.")
    var maxGrowth = 10.0

    mutating func run() async throws {
        let server = try LoopbackServer(recording: false)
        BadInputs.serve(on: server)
        // 24 photos from 320 to 1700 px, JPEG and PNG; each is asked for under many ids, so a
        // third of the good requests are distinct sources, the rest hits and shared work.
        let sizes = (0..<24).map { (width: 320 + $0 * 60, height: 240 + $0 * 40) }
        for (index, size) in sizes.enumerated() {
            let format: Fixtures.Format = index % 3 == 0 ? .png : .jpeg
            server.route(
                "/photo-\(index)", .ok(Fixtures.quadrants(width: size.width, height: size.height, format: format)))
        }
        let cache = try TemporaryDirectory()
        let profiles = try TestPipeline.load(Self.profiles)
        let settings = CacheSettings(
            directory: cache.path, diskLimit: 16 << 20, memory: .init(cost: 4 << 20, count: 500))
        let pipeline = Pipeline(profiles: profiles, configuration: PipelineConfiguration(cache: settings))

        var generator = SeededGenerator(seed: 42)
        let total = warmup + requests
        let plan: [ImageRequest] = (0..<total).map { n in
            let profile = n % 3 == 0 ? "blurred" : "thumbnail"
            let salt = "t=\(n)&s=salt\(n)"
            if Double.random(in: 0..<1, using: &generator) < bad {
                let input = BadInputs.cases[Int.random(in: 0..<BadInputs.cases.count, using: &generator)]
                return ImageRequest(source: server.url("\(input.path)?\(salt)"), profile: profile)
            }
            let id = Int.random(in: 0..<max(1, total / 3), using: &generator)
            return ImageRequest(source: server.url("/photo-\(id % sizes.count)?id=\(id)&\(salt)"), profile: profile)
        }

        let start = ContinuousClock.now
        var tally = Tally()
        var warm: Int?
        var peak = 0
        for batchStart in stride(from: 0, to: plan.count, by: concurrency * 4) {
            let slice = Array(plan[batchStart..<min(plan.count, batchStart + concurrency * 4)])
            tally.add(await Self.run(slice, in: pipeline, concurrency: concurrency))
            if warm == nil, batchStart + slice.count >= warmup {
                warm = Memory.residentAfterTrim()
            }
            peak = max(peak, Memory.resident())
            if (batchStart / (concurrency * 4)) % 8 == 0 {
                print("  \(tally.done)/\(plan.count)  rss \(Memory.megabytes(Memory.resident()))")
            }
        }
        await pipeline.flushCache()
        let elapsed = ContinuousClock.now - start
        let stats = await pipeline.stats()
        let end = Memory.residentAfterTrim()
        let baseline = warm ?? end
        let growth = 100 * Double(end - baseline) / Double(baseline)
        let vips = VipsPlugin.usage()

        print(
            """
            soak: \(plan.count) requests (\(warmup) warm-up, then \(requests)), \(tally.bad) of them bad, through one Pipeline, \(concurrency) at a time, in \(Int(elapsed.components.seconds)) s
              succeeded \(tally.succeeded), failed \(tally.failed); by kind: \(tally.kinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
              fetches \(stats.fetches), decodes \(stats.decodes), coalesced \(stats.coalesced), memory hits \(stats.memoryHits), disk hits \(stats.diskHits)
              RSS after warm-up \(Memory.megabytes(baseline)), after \(requests) more requests \(Memory.megabytes(end)), growth \(String(format: "%.1f", growth))%, peak \(Memory.megabytes(peak))
              in flight at the end: \(stats.inFlight)
              libvips at the end: \(vips)
            """)
        var problems: [String] = []
        if growth >= maxGrowth {
            problems.append("RSS grew \(String(format: "%.1f", growth))% after warm-up (limit \(maxGrowth)%)")
        }
        if stats.inFlight != 0 { problems.append("\(stats.inFlight) entries left in flight") }
        if vips.objects != 0 || vips.openFiles != 0 { problems.append("libvips still holds \(vips)") }
        if tally.failed != tally.bad { problems.append("\(tally.failed) failures for \(tally.bad) bad requests") }
        if tally.kinds["stage_failed"] != nil || tally.kinds["cancelled"] != nil {
            problems.append("unexpected error kinds")
        }
        guard problems.isEmpty else {
            print("soak FAILED: " + problems.joined(separator: "; "))
            throw ExitCode.failure
        }
        print("soak passed")
    }

    /// The bad cases' fetch limits with the short stall window: the soak counts error kinds only
    /// to see that none is a stage failure or a cancellation, so a cut-off body that a busy
    /// machine makes a timeout is no failure here, and a stalled source costs 3 s, not 60.
    static let profiles = """
        profile "thumbnail" {
          normalize  { drop_query = { "t", "s" } },
          fetch      { \(BadInputs.stallFetch) },
          cache      { disk = true },
          decode     {},
          downsample { size = 128, fit = "cover" },
          encode     { format = "jpeg", quality = 80 },
          cache      { memory = true },
        }
        profile "blurred" {
          normalize  { drop_query = { "t", "s" } },
          fetch      { \(BadInputs.stallFetch) },
          cache      { disk = true },
          decode     {},
          downsample { size = 200 },
          blur       { sigma = 8, dim = 0.3 },
          encode     { format = "webp", quality = 60 },
          cache      { memory = true },
        }
        """

    struct Tally {
        var done = 0, succeeded = 0, failed = 0, bad = 0
        var kinds: [String: Int] = [:]
        mutating func add(_ other: Tally) {
            done += other.done; succeeded += other.succeeded; failed += other.failed; bad += other.bad
            kinds.merge(other.kinds, uniquingKeysWith: +)
        }
    }

    static func run(_ requests: [ImageRequest], in pipeline: Pipeline, concurrency: Int) async -> Tally {
        let outcomes = await TestPipeline.outcomes(requests, in: pipeline, window: concurrency)
        var tally = Tally()
        for (request, outcome) in zip(requests, outcomes) {
            tally.done += 1
            if request.source.contains("/bad/") { tally.bad += 1 }
            switch outcome {
            case .success:
                tally.succeeded += 1
            case .failure(let error):
                tally.failed += 1
                tally.kinds[error.kind.name, default: 0] += 1
            }
        }
        return tally
    }
}

/// Resident memory from /proc/self/statm.
enum Memory {
    static func resident() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

    /// After glibc hands its free pages back (malloc_trim), so the figure is memory in use
    /// rather than what the allocator keeps for later.
    static func residentAfterTrim() -> Int {
        // malloc_trim is in <malloc.h>, which Swift's Glibc module leaves out.
        typealias Trim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(nil, "malloc_trim") { _ = unsafeBitCast(symbol, to: Trim.self)(0) }
        return resident()
    }

    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }
}
