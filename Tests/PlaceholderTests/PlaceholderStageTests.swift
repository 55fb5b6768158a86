import Foundation
import PipelineHost
import PlaceholderHashes
import TestSupport
import Testing

/// A profile that ends in a placeholder: the text it writes is what the reference decoders
/// read back, and the LQIP is a data URL of a tiny image.
@Suite("placeholder stage: a profile's output as text", .needs(.pixels, .process))
struct PlaceholderStageTests {
    static let profiles = """
        profile "thumbhash" { fetch {}, decode {}, placeholder {} }
        profile "blurhash" { fetch {}, decode {}, placeholder { kind = "blurhash", blurhash_x = 5, blurhash_y = 4 } }
        profile "lqip" { fetch {}, decode {}, placeholder { kind = "lqip" } }
        profile "lqip-jpeg" { fetch {}, decode {}, downsample { size = 300 }, placeholder { kind = "lqip", format = "jpeg", size = 24 } }
        """

    static func text(_ profile: String, _ source: String) async throws -> (String, format: String?) {
        let result = try await TestPipeline.run(profiles, source: source, profile: profile)
        return (String(decoding: result.bytes.array, as: UTF8.self), result.format)
    }

    @Test("thumbhash and blurhash outputs decode to the photo's colour, with the components asked for")
    func hashes() async throws {
        let source = Fixtures.path("examples/sample.jpg")
        let small = try PlaceholderHashTests.photo("examples/sample.jpg")
        let (thumb, thumbFormat) = try await Self.text("thumbhash", source)
        let (blur, blurFormat) = try await Self.text("blurhash", source)
        #expect(thumbFormat == "thumbhash" && blurFormat == "blurhash")
        #expect(FormatChoice.mediaType(thumbFormat) == "text/plain; charset=utf-8")
        let reading = try await ReferenceDecoders.read(
            blurhash: blur, thumbhash: Array(try #require(Data(base64Encoded: thumb))))
        #expect(reading.blurComponents == [5, 4])
        let average = PlaceholderHashTests.average(small)
        for channel in 0..<3 {
            #expect(abs(reading.thumbAverage[channel] - average[channel]) < 0.05)
            #expect(abs(reading.blurAverage[channel] - BlurHashTesting.meanSRGB(small, channel: channel)) <= 4)
        }
    }

    @Test(
        "an LQIP is a data URL of a tiny WebP (or JPEG), its longest side the size asked for",
        arguments: [
            ("lqip", "webp", 16), ("lqip-jpeg", "jpeg", 24),
        ])
    func lqip(_ profile: String, _ format: String, _ side: Int) async throws {
        let (url, kind) = try await Self.text(profile, Fixtures.path("examples/sample.jpg"))
        #expect(kind == "lqip")
        let prefix = "data:image/\(format);base64,"
        #expect(url.hasPrefix(prefix))
        let bytes = try #require(Data(base64Encoded: String(url.dropFirst(prefix.count))))
        let info = try #require(Fixtures.info(Array(bytes)))
        #expect(info.format == format && max(info.width, info.height) == side)
        #expect(!info.hasEXIF || format == "webp")
    }

    @Test("a WebP output carries no camera EXIF or GPS: strip removes the fields, not only the saver's flag")
    func webpIsStripped() async throws {
        let directory = try TemporaryDirectory()
        let camera = try await InfoTests.cameraJPEG(in: directory)
        for format in ["webp", "jpeg", "png"] {
            let result = try await TestPipeline.run(
                #"profile "p" { fetch {}, decode {}, downsample { size = 32 }, encode { format = "\#(format)" } }"#,
                source: camera)
            let path = try directory.write("out.\(format)", result.bytes.array)
            let outcome = try await CLIProcess.start(["-a", "-G1", "-s", path], executable: "/usr/bin/exiftool")
                .finished(timeout: 120)
            #expect(outcome.status == 0)
            for field in ["Make", "Model", "GPS", "DateTimeOriginal"] {
                #expect(!outcome.stdout.contains(field), "\(format) keeps \(field): \(outcome.stdout)")
            }
        }
    }
}
