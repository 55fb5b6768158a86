import Foundation
import PipelineHost
import PlaceholderHashes
import TestSupport
import Testing

/// `info` as the CLI and serve run it: the profile's own fetch, cache and decode, then the info
/// stage. What it says is checked against the image, and its hashes are read back by the
/// formats' reference decoders.
@Suite("info: a source described by the profile's own stages", .needs(.pixels, .process))
struct InfoTests {
    static let profiles = """
        profile "p" { fetch {}, decode {}, downsample { size = 64 }, encode {} }
        profile "camera" { fetch {}, decode {}, encode {}, info { exif = true } }
        profile "located" { fetch {}, decode {}, encode {}, info { exif = true, gps = true } }
        """

    // swift-format-ignore: AlwaysUseLowerCamelCase
    struct Described: Decodable {
        let width: Int, height: Int, format: String, frames: Int, has_alpha: Bool, bytes: Int, orientation: Int
        let duration_ms: Int?, loop: Int?
        let dominant: String?, blurhash: String, thumbhash: String
        let exif: [String: String]?
        let gps: [String: Double]?
    }

    static func describe(_ source: String, profile: String = "p") async throws -> (Described, raw: String) {
        let pipeline = Pipeline(profiles: try TestPipeline.load(profiles))
        let result = try await pipeline.image(for: ImageRequest(source: source, profile: ProfileSet.infoName(profile)))
        #expect(result.format == "json")
        return (
            try JSONDecoder().decode(Described.self, from: Data(result.bytes.array)),
            String(decoding: result.bytes.array, as: UTF8.self)
        )
    }

    /// A test image: its file, its size, its format, whether it has alpha, and its average
    /// colour over white for BlurHash (sRGB 0...255) and weighted by alpha for ThumbHash (0...1).
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String, path: String, width: Int, height: Int, format: String, alpha: Bool
        let thumbAverage: [Double], blurAverage: [Double]
        var testDescription: String { name }

        static func photo(_ relative: String, format: String, alpha: Bool = false) throws -> Case {
            let small = try PlaceholderHashTests.photo(relative)
            let info = try #require(Fixtures.info(try Fixtures.read(Fixtures.path(relative))))
            return Case(
                name: relative, path: Fixtures.path(relative), width: info.width, height: info.height, format: format,
                alpha: alpha,
                thumbAverage: PlaceholderHashTests.average(small),
                blurAverage: (0..<3).map { BlurHashTesting.meanSRGB(small, channel: $0) })
        }

        /// A PNG painted by `colour`, with `average` what any shrink of it keeps.
        static func painted(
            _ name: String, _ width: Int, _ height: Int, in directory: TemporaryDirectory,
            sample: RGBAImage, _ colour: @escaping (Int, Int) -> [UInt8]
        ) throws -> Case {
            let path = try directory.write(name + ".png", Fixtures.painted(width: width, height: height, colour))
            return Case(
                name: name, path: path, width: width, height: height, format: "png", alpha: false,
                thumbAverage: PlaceholderHashTests.average(sample),
                blurAverage: (0..<3).map { BlurHashTesting.meanSRGB(sample, channel: $0) })
        }
    }

    static func cases(in directory: TemporaryDirectory) throws -> [Case] {
        let one = RGBAImage(width: 1, height: 1, pixels: [200, 30, 60, 255])!
        let halves = RGBAImage(width: 2, height: 1, pixels: [250, 250, 20, 255, 10, 40, 200, 255])!
        let grey = RGBAImage(width: 1, height: 1, pixels: [90, 90, 90, 255])!
        return [
            try .photo("examples/sample.jpg", format: "jpeg"),
            try .photo("docs/gallery/cover-west.jpg", format: "jpeg"),
            try .photo("docs/gallery/mark.png", format: "png", alpha: true),
            try .painted("1x1", 1, 1, in: directory, sample: one) { _, _ in [200, 30, 60] },
            try .painted("wide", 2000, 10, in: directory, sample: halves) { x, _ in
                x < 1000 ? [250, 250, 20] : [10, 40, 200]
            },
            try .painted("grey", 300, 200, in: directory, sample: grey) { _, _ in [90, 90, 90] },
        ]
    }

    @Test("size, format and alpha are the image's; the reference decoders read its colour and shape from both hashes")
    func describesRealImages() async throws {
        let directory = try TemporaryDirectory()
        for image in try Self.cases(in: directory) {
            let (info, _) = try await Self.describe(image.path)
            #expect(info.width == image.width && info.height == image.height, "\(image.name)")
            #expect(info.format == image.format && info.frames == 1 && info.orientation == 1, "\(image.name)")
            #expect(info.has_alpha == image.alpha, "\(image.name)")
            #expect(info.bytes == (try Fixtures.read(image.path)).count, "\(image.name)")
            #expect(info.dominant?.wholeMatch(of: /#[0-9a-f]{6}/) != nil, "\(image.name)")
            let thumbhash = try #require(
                Data(base64Encoded: info.thumbhash), "\(image.name): ThumbHash is standard base64")
            let reading = try await ReferenceDecoders.read(blurhash: info.blurhash, thumbhash: Array(thumbhash))
            #expect(reading.blurComponents == [4, 3], "\(image.name)")
            for channel in 0..<3 {
                #expect(
                    abs(reading.thumbAverage[channel] - image.thumbAverage[channel]) < 0.05,
                    "\(image.name) ThumbHash channel \(channel)")
                #expect(
                    abs(reading.blurAverage[channel] - image.blurAverage[channel]) <= 4,
                    "\(image.name) BlurHash channel \(channel)")
            }
            // The aspect ratio, to the nearest of ThumbHash's steps (7 on the long side, 5 with alpha).
            let steps = Double(image.alpha ? 5 : 7), (w, h) = (Double(image.width), Double(image.height))
            let expected = w > h ? steps / max(1, (steps * h / w).rounded()) : max(1, (steps * w / h).rounded()) / steps
            #expect(
                abs(reading.thumbAspect - expected) < 1e-9, "\(image.name): \(reading.thumbAspect) against \(w / h)")
        }
    }

    @Test("a one-colour image's dominant colour is that colour; frames of an animation are counted")
    func dominantAndFrames() async throws {
        let directory = try TemporaryDirectory()
        let flat = try directory.write("flat.png", Fixtures.painted(width: 50, height: 30) { _, _ in [200, 30, 60] })
        #expect(try await Self.describe(flat).0.dominant == "#c81e3c")
        let gif = try directory.write("anim.gif", Fixtures.animatedGIF(frames: 3, delayMs: 80, loop: 2))
        let animated = try await Self.describe(gif).0
        #expect(animated.format == "gif" && animated.frames == 3)
        #expect(animated.duration_ms == 240 && animated.loop == 2, "one pass of 3 frames of 80 ms, played twice")
        let still = try await Self.describe(flat).0
        #expect(still.duration_ms == nil && still.loop == nil)
        // An animated AVIF (read through libavif) is counted and timed the same way.
        let avif = try await TestPipeline.run(
            #"profile "a" { fetch {}, decode {}, encode { format = "avif" } }"#, source: gif)
        let sequence = try directory.write("anim.avif", avif.bytes.array)
        let described = try await Self.describe(sequence).0
        #expect(described.format == "avif" && described.frames == 3 && described.width == 16, "\(described)")
        #expect(described.duration_ms == 240 && described.loop == 0, "libavif 0.11 reads no loop count: for ever")
    }

    /// A JPEG with camera EXIF and a GPS position, written by exiftool (scripts/setup test installs it).
    static func cameraJPEG(in directory: TemporaryDirectory, orientation: Int = 1) async throws -> String {
        let path = try directory.write("camera.jpg", Fixtures.quadrants(width: 64, height: 48))
        let outcome = try await CLIProcess.start(
            [
                "-q", "-overwrite_original", "-n", "-Make=Canon", "-Model=EOS 5D",
                "-DateTimeOriginal=2024:05:01 10:00:00", "-GPSLatitude=51.5", "-GPSLatitudeRef=N",
                "-GPSLongitude=0.12", "-GPSLongitudeRef=W", "-Orientation=\(orientation)", path,
            ],
            executable: "/usr/bin/exiftool"
        ).finished(timeout: 120)
        guard outcome.status == 0 else {
            throw ReferenceFailure("exiftool failed (scripts/setup test installs it): \(outcome.stderr)")
        }
        return path
    }

    @Test(
        "EXIF make, model and date taken only when the profile asks (exif = true); the GPS position only with gps = true"
    )
    func exifWithoutGPS() async throws {
        let directory = try TemporaryDirectory()
        let path = try await Self.cameraJPEG(in: directory, orientation: 6)
        let (plain, plainRaw) = try await Self.describe(path)
        #expect(plain.exif == nil && plain.gps == nil)
        #expect(!plainRaw.contains("Canon") && !plainRaw.contains("EOS") && !plainRaw.contains("2024"), "\(plainRaw)")
        let (info, raw) = try await Self.describe(path, profile: "camera")
        #expect(info.exif == ["make": "Canon", "model": "EOS 5D", "date_taken": "2024:05:01 10:00:00"])
        #expect(info.gps == nil)
        #expect(!raw.lowercased().contains("gps") && !raw.contains("51.5"))
        // Orientation 6 turns the stored 64×48 a quarter: it is shown 48×64.
        #expect(info.orientation == 6 && info.width == 48 && info.height == 64)

        let located = try await Self.describe(path, profile: "located").0
        let gps = try #require(located.gps)
        #expect(abs(gps["latitude"]! - 51.5) < 1e-9 && abs(gps["longitude"]! + 0.12) < 1e-9)
    }

    @Test("a decompression bomb is refused from its header, and a page is not an image")
    func refusesWhatDecodeRefuses() async throws {
        let directory = try TemporaryDirectory()
        let bomb = try directory.write("bomb.png", Fixtures.bombPNG(width: 60_000, height: 60_000))
        let page = try directory.write("page.jpg", Array("<!doctype html><p>hi".utf8))
        let pipeline = Pipeline(profiles: try TestPipeline.load(Self.profiles))
        for (path, kind) in [(bomb, PipelineError.Kind.pixelLimit), (page, .notAnImage)] {
            do {
                let result = try await pipeline.image(
                    for: ImageRequest(source: path, profile: ProfileSet.infoName("p")))
                Issue.record("\(path): described as \(String(decoding: result.bytes.array, as: UTF8.self))")
            } catch {
                #expect(error.kind == kind, "\(path): \(error)")
            }
        }
    }
}
