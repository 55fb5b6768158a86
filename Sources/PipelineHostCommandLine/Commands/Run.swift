import ArgumentParser
import Glibc
import PipelineHost

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run sources through one or more profiles and write the results.",
        discussion: """
            Each SOURCE is an http(s) URL, a file:// URL or a local path; more can come from \
            --input-list, one per line (blank lines and lines starting with # are skipped). \
            With several --profile options every source runs through every profile.

            One line is printed per result: the source (credentials redacted), the output \
            file, its pixel size, bytes and time. Failures go to standard error with their \
            cause; the other sources still run. On a terminal a progress line shows \
            done/failed/total, rate and ETA.

            Sources with the same stable key (the same image behind different auth salts) and \
            the profiles of one source run together: one download, and shared stages run once.

            With OTEL_EXPORTER_OTLP_ENDPOINT set, each source is an OpenTelemetry trace, sent \
            when the batch ends: where its time went, which cache answered (docs/SERVE.md, \
            "Tracing").

            Output files are named <name>-<hash>.<profile>.<ext> in --output-dir (default: the \
            current directory), where <hash> comes from the normalized source. Files are \
            written to a temporary name and renamed, so no half-written file is ever left.

            Profiles with a cache stage keep originals on disk and variants in memory (or on \
            disk too), so a second run of the same sources, even with fresh auth salts, makes \
            no transfers. --refresh revalidates, --offline never transfers, --no-cache turns \
            the cache off; `pipelinehost cache stats` shows what is stored.

            Ctrl-C (or SIGTERM) stops the run: work in progress is cancelled, a summary is \
            printed, and the exit code is 130. A second Ctrl-C exits at once.

            Examples:
              pipelinehost run examples/thumbnail.lua examples/sample.jpg -o thumb.jpg
              PIPELINEHOST_SECRET_SUBSONIC_PASSWORD=… pipelinehost run examples/subsonic.lua \\
                  --profile thumbnail --profile blurred-background \\
                  --input-list urls.txt --output-dir covers/ --stats > stats.json
            """)

    @Argument(help: "The Lua profile file.")
    var profileFile: String

    @Argument(help: "URLs (http, https, file) or local paths.")
    var sources: [String] = []

    @Option(
        name: .customLong("input-list"),
        help: ArgumentHelp(
            "A file with one source per line, or - for standard input.", valueName: "file|-"))
    var inputList: String?

    @Option(
        name: .long, help: "The profile to run, when the file defines several. Repeat to run each source through each.")
    var profile: [String] = []

    @Option(name: .shortAndLong, help: "Output file; only with one source and one profile.")
    var output: String?

    @Option(name: .customLong("output-dir"), help: "Directory for output files (created if missing).")
    var outputDirectory: String?

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "Results in progress at once (default: 4 per core, at least 8). "
                + "Transfers and CPU stages have their own limits below."))
    var jobs: Int?

    @Option(name: .long, help: "Transfers at once, over all hosts.")
    var connections = PipelineConfiguration.defaultTransfers

    @Option(name: .customLong("per-host"), help: "Transfers at once to one host.")
    var perHost = PipelineConfiguration.defaultTransfersPerHost

    @Flag(
        name: .long,
        help: "Print one JSON object of counters on standard output at the end; result lines go to standard error.")
    var stats = false

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "One JSON object per line on standard output for each result and each error, instead of the text lines.",
            discussion:
                #"Results: {"type":"result","source",...,"output","width","height","bytes","ms"}; errors: {"type":"error","kind":"http_status","reason":"HTTP 404","http_status":404,...}. With --stats the counters come last, as {"type":"stats",...}."#
        ))
    var json = false

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "For a source that fails in a way its profile's fallback { ... } covers, write the fallback in its place.",
            discussion: "The failure is still reported and the exit code is still 1."))
    var fallback = false

    @Flag(name: .customLong("no-progress"), help: "No progress line, even on a terminal.")
    var noProgress = false

    @Flag(
        name: .long,
        help: "After each result, print its stage timings (ms; queue waits as +N queued) on standard error.")
    var trace = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "What the viewer accepts, as an HTTP Accept header (\"image/avif,image/webp\"): profiles whose encode says "
                + "format = \"auto\" write AVIF, WebP or JPEG from it, as serve does. Without it they write JPEG.",
            valueName: "types"))
    var accept: String?

    @Option(
        name: .customLong("param"),
        help: ArgumentHelp(
            "Choose a profile option, as params { ... } declares it (w=600). Repeat for several.",
            valueName: "name=value"))
    var params: [String] = []

    @OptionGroup(title: "Memory")
    var memory: MemoryOptions

    @OptionGroup(title: "Cache")
    var cache: CacheOptions

    @OptionGroup(title: "Profiles")
    var access: ProfileAccessOptions

    func validate() throws {
        guard !sources.isEmpty || inputList != nil else {
            throw ValidationError("give at least one SOURCE after the profile file, or --input-list FILE")
        }
        if let jobs { try FlagRange.count(jobs, "--jobs", in: 1...10_000) }
        try FlagRange.count(connections, "--connections", in: 1...10_000)
        try FlagRange.count(perHost, "--per-host", in: 1...10_000)
        if output != nil, outputDirectory != nil { throw ValidationError("use -o or --output-dir, not both") }
        if output != nil, inputList != nil || sources.count > 1 || profile.count > 1 {
            throw ValidationError("-o takes one source and one profile; use --output-dir for several")
        }
    }

    func run() async throws {
        // Reading the profile (up to its one-second limit) and the input list block: they run on
        // the blocking pool, never on Swift's cooperative one.
        let (profileFile, inputList) = (profileFile, inputList)
        let telemetry = try Telemetry.start()
        try access.apply()
        let set = try await BlockingExecutor.shared.run { try loadProfiles(profileFile) }
        let chosen = try chooseProfiles(in: set)
        let all = try await sources + BlockingExecutor.shared.run { try InputList.read(inputList) }
        guard !all.isEmpty else {
            throw usageError("no sources: \(inputList ?? "the input list") has no lines")
        }
        try await cache.checkSharedCredentials()
        let directory = outputDirectory ?? "."
        if output == nil { try Self.prepare(outputDirectory: directory) }
        let choices = try ParamOption.overrides(params, for: chosen, in: set)
        // A profile whose format is "auto" writes what --accept negotiates (jpeg without it).
        let canWriteAVIF = accept != nil && pluginsCanEncode("avif")
        let requests = all.flatMap { source in
            chosen.map { name in
                set.request(
                    source: source, profile: name, choices: choices[name] ?? [:], accept: accept,
                    canWriteAVIF: canWriteAVIF
                ).request
            }
        }
        // About one CPU stage per core runs at once; libvips gets the cores that leaves it.
        let cores = PipelineConfiguration.cores
        let jobs = jobs ?? Batch.defaultJobs
        setThreadsPerOperation(cores / min(cores, jobs, requests.count))
        let pipeline = Pipeline(
            profiles: set,
            configuration: PipelineConfiguration(
                transfers: connections, transfersPerHost: perHost, cpuStages: cores,
                cache: try cache.settingsWithSharedTier(), memoryBudget: memory.bytes))
        try await telemetry.exporting { try await runBatch(requests, set: set, pipeline: pipeline, jobs: jobs) }
    }

    /// The batch, written as it finishes; with an exporter running beside it.
    private func runBatch(_ requests: [ImageRequest], set: ProfileSet, pipeline: Pipeline, jobs: Int) async throws {
        let directory = outputDirectory ?? "."
        let batch = await Batch.grouped(requests, in: pipeline, window: jobs)
        var writer = ResultWriter(
            file: output, directory: directory, linesToError: stats, trace: trace, json: json,
            progress: ProgressDisplay(total: requests.count, enabled: !noProgress))
        if fallback { writer.fallback = Self.fallbacks(in: set, pipeline: pipeline) }
        let summary = await Batch.finishing(pipeline) { [writer] in await writer.run(batch) }
        if stats {
            printOutput(StatsJSON.render(await pipeline.stats(), run: summary, tagged: json))
        }
        if summary.interrupted {
            printError(
                "interrupted: \(summary.succeeded + summary.failed) of \(requests.count) finished "
                    + "(\(summary.succeeded) ok, \(summary.failed) failed), \(summary.cancelled) cancelled, "
                    + "\(summary.notStarted) not started")
            throw ExitCode.interrupted
        }
        if summary.failed > 0 { throw ExitCode.someFailed }
    }

    /// --fallback: a failed request's profile fallback, made by its fallback chain.
    static func fallbacks(in set: ProfileSet, pipeline: Pipeline)
        -> @Sendable (ImageRequest, PipelineError) async -> (PipelineResult, key: String)?
    {
        { request, error in
            guard let fallback = set[request.profile]?.fallbackSetting, fallback.covers(error),
                let made = try? await pipeline.image(for: set.fallbackRequest(for: request))
            else { return nil }
            return (made, (try? await pipeline.sourceKey(for: request)) ?? request.source)
        }
    }

    /// Creates --output-dir when missing; anything in the way is a one-line usage error.
    private static func prepare(outputDirectory directory: String) throws {
        var info = stat()
        if stat(directory, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw usageError("--output-dir \(directory) exists and is not a directory")
            }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            // Foundation's error is several lines; mkdir's errno says the same in a few words.
            let reason = mkdir(directory, 0o755) == 0 ? "unknown error" : String(cString: strerror(errno))
            throw usageError("cannot create --output-dir \(directory): \(reason)")
        }
    }

    private func chooseProfiles(in set: ProfileSet) throws -> [String] {
        if profile.isEmpty { return [try ProfileChoice.named(nil, in: set)] }
        return try profile.map { try ProfileChoice.named($0, in: set) }
    }
}
