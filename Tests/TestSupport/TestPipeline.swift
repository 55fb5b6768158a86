import CirclePlugin
import FetchPlugin
import Foundation
import KeyNormalizePlugin
import PipelineHost
@_exported import PipelineProfiles
@_exported import PipelineTesting
import SubsonicAuthPlugin
import VipsPlugin

/// Profiles and pipelines built the way the CLI builds them, from Lua text.
public enum TestPipeline {
    public static var plugins: [any PipelinePlugin.Type] {
        [
            CachePlugin.self, FetchPlugin.self, KeyNormalizePlugin.self, VipsPlugin.self, SubsonicAuthPlugin.self,
            CirclePlugin.self,
        ]
    }

    public static func registry(extra: [any PipelinePlugin.Type] = []) throws -> StageRegistry {
        try StageRegistry(plugins: plugins + extra)
    }

    /// Loads profile text as if it were the file `name`.
    public static func load(
        _ lua: String, name: String = "test.lua", limits: ProfileLimits = ProfileLimits(),
        extra: [any PipelinePlugin.Type] = [], gates: HoldGates? = nil
    ) throws -> ProfileSet {
        var registry = try registry(extra: extra)
        try gates?.register(in: &registry)
        return try ProfileLoader(registry: registry, limits: limits).load(code: Array(lua.utf8), name: name)
    }

    /// Loads a profile file from the package, such as "examples/subsonic.lua".
    public static func example(_ relative: String) throws -> ProfileSet {
        try ProfileLoader(registry: registry()).load(file: Fixtures.path(relative))
    }

    /// Loads a profile file from the package with every fetch's timeout set to `fetchTimeout`
    /// (and its low-speed time to match): for a suite that holds the example's transfers on
    /// purpose and opens them itself, as `thumbnail(fetchTimeout:)`.
    public static func example(_ relative: String, fetchTimeout: Int) throws -> ProfileSet {
        let text = try String(contentsOfFile: Fixtures.path(relative), encoding: .utf8)
        let longer = text.replacing(/(fetch\s*\{\s*timeout = )\d+/) {
            "\($0.output.1)\(fetchTimeout), low_speed_time = \(lowSpeedTime(for: fetchTimeout))"
        }
        guard longer != text else { throw ServerError("\(relative) has no fetch { timeout = N } to lengthen") }
        return try load(longer, name: (relative as NSString).lastPathComponent)
    }

    /// How long a transfer may send nothing before libcurl gives up: the fetch stage's default
    /// (15 s), or a long `fetchTimeout` itself, so a held transfer is not cut off by its speed.
    static func lowSpeedTime(for fetchTimeout: Int) -> Int { min(600, max(15, fetchTimeout)) }

    /// A configuration whose disk cache lives in `directory`, for profiles with cache stages.
    public static func configuration(
        cacheIn directory: TemporaryDirectory, mode: CacheSettings.Mode = .normal,
        diskLimit: Int = 1 << 30
    ) -> PipelineConfiguration {
        PipelineConfiguration(cache: CacheSettings(mode: mode, directory: directory.path, diskLimit: diskLimit))
    }

    /// Runs one source through the profile `profile` of `lua`.
    public static func run(_ lua: String, source: String, profile: String? = nil) async throws -> PipelineResult {
        let set = try load(lua)
        let pipeline = Pipeline(profiles: set)
        return try await pipeline.image(for: ImageRequest(source: source, profile: profile ?? set.names[0]))
    }

    /// A `width` x `height` animation of `frames` flat greys (`Fixtures.animatedGIF`) through
    /// `stages` (each ending in a comma): the answer's facts as an animated WebP, and its frames
    /// stacked in one image, as a lossless WebP keeps them.
    public static func animation(
        frames: Int, width: Int, height: Int, through stages: String
    ) async throws -> (info: Fixtures.Info, stacked: Fixtures.Pixels) {
        let directory = try TemporaryDirectory()
        let path = try directory.write(
            "animation.gif", Fixtures.animatedGIF(frames: frames, width: width, height: height))
        let animated = try await run(
            #"profile "p" { fetch {}, decode { frames = \#(frames) }, \#(stages) encode { format = "webp" } }"#,
            source: path)
        guard let info = Fixtures.info(animated.bytes.array) else { throw ServerError("the answer does not decode") }
        return (info, try await stackedFrames(of: path, frames: frames, through: stages))
    }

    /// The first `frames` frames of the animation at `path` after `stages` (each ending in a
    /// comma, or none), stacked in one image, as a lossless WebP keeps every pixel of them.
    public static func stackedFrames(of path: String, frames: Int, through stages: String) async throws
        -> Fixtures.Pixels
    {
        let result = try await run(
            #"profile "p" { fetch {}, decode { frames = \#(frames) }, \#(stages) encode { format = "webp", lossless = true } }"#,
            source: path)
        guard let pixels = Fixtures.decodedFrames(result.bytes.array) else {
            throw ServerError("the lossless WebP does not decode")
        }
        return pixels
    }

    /// The pixels of `input` (written into `directory`) after fetch, decode, `stages` and a PNG
    /// encode, which keeps every pixel as the stages left it.
    public static func pixels(after stages: String, input: [UInt8], in directory: TemporaryDirectory) async throws
        -> Fixtures.Pixels
    {
        let path = try directory.write("input.png", input)
        let result = try await run(
            #"profile "p" { fetch {}, decode {}, \#(stages), encode { format = "png" } }"#, source: path)
        guard let pixels = Fixtures.decoded(result.bytes.array) else {
            throw ServerError("the PNG result does not decode")
        }
        return pixels
    }

    /// The error a run ends with, or nil when it succeeds.
    public static func failure(_ lua: String, source: String) async throws -> PipelineError? {
        do {
            _ = try await run(lua, source: source)
            return nil
        } catch let error as PipelineError {
            return error
        }
    }

    /// Runs `requests` through `pipeline`, at most `window` at a time, and gives each one's
    /// outcome in request order.
    public static func outcomes(
        _ requests: [ImageRequest], in pipeline: Pipeline,
        window: Int
    ) async -> [Result<PipelineResult, PipelineError>] {
        await withTaskGroup(of: (Int, Result<PipelineResult, PipelineError>).self) { group in
            var results = [Result<PipelineResult, PipelineError>?](repeating: nil, count: requests.count)
            var next = 0
            while next < min(window, requests.count) {
                let index = next
                group.addTask { (index, await outcome(requests[index], in: pipeline)) }
                next += 1
            }
            while let (index, result) = await group.next() {
                results[index] = result
                if next < requests.count {
                    let index = next
                    group.addTask { (index, await outcome(requests[index], in: pipeline)) }
                    next += 1
                }
            }
            return results.map { $0! }
        }
    }

    private static func outcome(_ request: ImageRequest, in pipeline: Pipeline) async -> Result<
        PipelineResult, PipelineError
    > {
        do {
            return .success(try await pipeline.image(for: request))
        } catch {
            return .failure(error)  // image(for:) throws only PipelineError
        }
    }

    /// A profile with every stage default except those given, ending in a JPEG.
    /// `fetchTimeout`: a suite that holds a transfer on purpose, and opens it itself, gives a long
    /// one, so a busy machine's slow set-up cannot run into it; the low-speed time follows it, or
    /// a held transfer that sends nothing is cut off after 15 s all the same.
    public static func thumbnail(size: Int = 300, fit: String = "cover", extra: String = "", fetchTimeout: Int = 5)
        -> String
    {
        """
        profile "thumbnail" {
          normalize  { drop_query = { "u", "t", "s", "p" } },
          fetch      { timeout = \(fetchTimeout), low_speed_time = \(lowSpeedTime(for: fetchTimeout)) },
          decode     {},
          downsample { size = \(size), fit = "\(fit)" },\(extra)
          encode     { format = "jpeg" },
        }
        """
    }
}

/// A scratch directory removed when the value goes away.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init() throws {
        path = NSTemporaryDirectory() + "pipelinehost-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    public func file(_ name: String) -> String { path + "/" + name }

    /// Writes `bytes` to `name` and returns its path.
    @discardableResult
    public func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    public var contents: [String] { (try? FileManager.default.contentsOfDirectory(atPath: path))?.sorted() ?? [] }
}
