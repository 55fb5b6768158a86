import ArgumentParser
import PipelineHost

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Describe sources as JSON: size, format, EXIF, dominant colour, BlurHash and ThumbHash.",
        discussion: """
            Prints one JSON object per source on its own line:

              {"type":"info","source":"photo.jpg","profile":"thumbnail",
               "blurhash":"L4Gkd%-ny9-oDs7e:ArFp3xwT[K6","bytes":2110329,"dominant":"#976756",
               "exif":{"date_taken":"2024:05:01 10:00:00","make":"Canon","model":"EOS 5D"},
               "format":"jpeg","frames":1,"has_alpha":false,"height":2880,"orientation":1,
               "thumbhash":"nigCDYK5aVBzZ0S8igtSnZlCgJeA","width":5120}

            width and height are as displayed (EXIF orientation applied). The BlurHash has 4×3 \
            components and the ThumbHash is standard base64; both come from a copy shrunk on load \
            to 100 px, so the full pixels are never decoded. The camera's make, model and date \
            taken ("exif") are given only when the profile writes info { exif = true }, and the \
            GPS position only with info { gps = true }.

            An animation also gives duration_ms, the sum of its frames' delays as the file \
            states them, and loop, how many times it plays (0: for ever).

            The profile's own key, fetch, cache and decode stages do the work, so its limits \
            (max_bytes, max_pixels, block_private...) apply and a stored original is reused \
            without a transfer. A failing source prints the same JSON error object as \
            run --json, and the exit code is 1; the other sources still run.

            Examples:
              pipelinehost info examples/thumbnail.lua examples/sample.jpg
              pipelinehost info examples/subsonic.lua --profile thumbnail --input-list urls.txt
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
        name: .long,
        help:
            "The profile whose fetch, cache and decode stages (and info settings) to use, when the file defines several."
    )
    var profile: String?

    @Option(name: .shortAndLong, help: "Sources described at once (default: 4 per core, at least 8).")
    var jobs: Int?

    @OptionGroup(title: "Cache")
    var cache: CacheOptions

    @OptionGroup(title: "Profiles")
    var access: ProfileAccessOptions

    func validate() throws {
        guard !sources.isEmpty || inputList != nil else {
            throw ValidationError("give at least one SOURCE after the profile file, or --input-list FILE")
        }
        if let jobs { try FlagRange.count(jobs, "--jobs", in: 1...10_000) }
    }

    func run() async throws {
        let (profileFile, inputList) = (profileFile, inputList)
        try access.apply()
        let set = try await BlockingExecutor.shared.run { try loadProfiles(profileFile) }
        let name = try ProfileChoice.named(profile, in: set)
        guard set[ProfileSet.infoName(name)] != nil else {
            throw usageError(
                "profile \"\(name)\" has no decode stage (or no plugin registers info); info reads what decode opens")
        }
        let all = try await sources + BlockingExecutor.shared.run { try InputList.read(inputList) }
        try await cache.checkSharedCredentials()
        let requests = all.map { set.infoRequest(source: $0, profile: name) }
        let pipeline = Pipeline(
            profiles: set,
            configuration: PipelineConfiguration(
                cpuStages: PipelineConfiguration.cores, cache: try cache.settingsWithSharedTier()))
        let batch = await Batch.grouped(requests, in: pipeline, window: jobs ?? Batch.defaultJobs)
        let (ending, failed) = await Batch.finishing(pipeline) { () -> (Batch.Ending, Int) in
            var failed = 0
            let ending = await batch.run { request, outcome in
                switch outcome {
                case .success(let result):
                    printOutput(Self.line(result, source: result.source, profile: name))
                case .failure(let error):
                    failed += error.kind == .cancelled ? 0 : 1
                    printOutput(
                        ResultJSON.failure(
                            error, source: error.source ?? set.redaction(request.source), profile: name))
                }
            }
            return (ending, failed)
        }
        if ending.interrupted { throw ExitCode.interrupted }
        if failed > 0 { throw ExitCode.someFailed }
    }

    /// The info stage's JSON object with type, source and profile first.
    static func line(_ result: PipelineResult, source: String, profile: String) -> String {
        let body = String(decoding: result.bytes.buffer, as: UTF8.self)
        guard body.hasPrefix("{"), body.hasSuffix("}") else {
            return ResultJSON.failure(
                PipelineError(.stageFailed, "info: the stage gave no JSON object"), source: source, profile: profile)
        }
        let quoted = { (text: String) in ResultJSON.encode(text) }
        let rest = body.dropFirst()
        return #"{"type":"info","source":"# + quoted(source) + #","profile":"# + quoted(profile)
            + (rest == "}" ? "" : ",") + rest
    }
}
