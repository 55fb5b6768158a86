import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PipelineHost

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run sources through a profile and write the results.",
        discussion: """
            Each SOURCE is an http(s) URL, a file:// URL or a local path. One line is printed per
            source: the source (credentials redacted), the output file, its pixel size, bytes and
            time. Failures are printed to standard error with their cause; the other sources still run.

            Output files are named <name>-<hash>.<profile>.<ext> in --output-dir (default: the
            current directory), where <hash> comes from the normalized source, so salted URLs of
            one image get one name. Files are written to a temporary name and renamed, so no
            half-written file is ever left.

            Examples:
              pipelinehost run examples/thumbnail.lua examples/sample.jpg -o thumb.jpg
              pipelinehost run examples/subsonic.lua --profile thumbnail \\
                  'https://music.example/rest/getCoverArt?id=al-1&u=me&t=…&s=…' --output-dir covers/
            """)

    @Argument(help: "The Lua profile file.")
    var profileFile: String

    @Argument(help: "URLs (http, https, file) or local paths.")
    var sources: [String] = []

    @Option(name: .long, help: "The profile to run, when the file defines several. Repeat to run each source through each.")
    var profile: [String] = []

    @Option(name: .shortAndLong, help: "Output file; only with one source and one profile.")
    var output: String?

    @Option(name: .customLong("output-dir"), help: "Directory for output files (created if missing).")
    var outputDirectory: String?

    @Option(name: .shortAndLong, help: "How many sources run at once.")
    var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

    func validate() throws {
        guard !sources.isEmpty else { throw ValidationError("give at least one SOURCE after the profile file") }
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        if output != nil, outputDirectory != nil { throw ValidationError("use -o or --output-dir, not both") }
        if output != nil, sources.count > 1 || profile.count > 1 {
            throw ValidationError("-o takes one source and one profile; use --output-dir for several")
        }
    }

    func run() async throws {
        let set = try loadProfiles(profileFile)
        let chosen = try chooseProfiles(in: set)
        let directory = outputDirectory ?? "."
        if output == nil {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let pipeline = Pipeline(profiles: set)
        let requests = sources.flatMap { source in chosen.map { ImageRequest(source: source, profile: $0) } }
        var failed = 0
        await forEachResult(of: requests, pipeline: pipeline) { request, outcome in
            switch outcome {
            case .success(let result):
                let path = output ?? OutputName.path(for: result, in: directory)
                do {
                    try AtomicFile.write(result.bytes, to: path)
                    print(ResultLine.success(result, path: path))
                } catch {
                    failed += 1
                    printError(ResultLine.failure(result.source, "cannot write \(path): \(error)"))
                }
            case .failure(let error):
                failed += 1
                printError(ResultLine.failure(error.source ?? Redactor.redact(request.source), error.reason))
            }
        }
        if failed > 0 { throw ExitCode.someFailed }
    }

    private func chooseProfiles(in set: ProfileSet) throws -> [String] {
        let available = set.names.map { "\"\($0)\"" }.joined(separator: ", ")
        if profile.isEmpty {
            guard set.profiles.count == 1 else {
                printError("error: \(set.file) defines several profiles (\(available)); choose one with --profile NAME")
                throw ExitCode.usage
            }
            return set.names
        }
        for name in profile where set[name] == nil {
            printError("error: \(set.file) has no profile \"\(name)\"; it defines \(available)")
            throw ExitCode.usage
        }
        return profile
    }

    typealias Outcome = (request: ImageRequest, result: Result<PipelineResult, PipelineError>)

    /// Runs the requests, at most `jobs` at a time, and hands each outcome to `handle` on this task.
    private func forEachResult(of requests: [ImageRequest], pipeline: Pipeline,
                               _ handle: (ImageRequest, Result<PipelineResult, PipelineError>) -> Void) async {
        await withTaskGroup(of: Outcome.self) { group in
            var next = 0
            while next < min(jobs, requests.count) {
                let request = requests[next]
                next += 1
                group.addTask { await Self.outcome(of: request, in: pipeline) }
            }
            while let outcome = await group.next() {
                handle(outcome.request, outcome.result)
                if next < requests.count {
                    let request = requests[next]
                    next += 1
                    group.addTask { await Self.outcome(of: request, in: pipeline) }
                }
            }
        }
    }

    private static func outcome(of request: ImageRequest, in pipeline: Pipeline) async -> Outcome {
        do {
            return (request, .success(try await pipeline.image(for: request)))
        } catch {
            return (request, .failure(error))
        }
    }
}
