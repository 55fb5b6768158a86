import CVips
import Foundation
import PipelineHost
import TestSupport
import Testing

/// Colour comes out right whatever profile or depth the source has: pixels are converted from
/// an embedded ICC profile to sRGB, so stripping the profile afterwards changes nothing.
@Suite("colour: ICC profiles, CMYK, Display-P3, 16 bits", .needs(.pixels))
struct ColourTests {
    let directory: TemporaryDirectory
    let plain: String
    /// The colour every fixture shows.
    static let colour: [UInt8] = [200, 60, 40]

    init() throws {
        directory = try TemporaryDirectory()
        plain = try directory.write("plain.png", Fixtures.painted(width: 64, height: 64) { _, _ in Self.colour })
    }

    func centre(
        of bytes: [UInt8], name: String, stages: String = "downsample { size = 32 }",
        encode: String = #"format = "png""#
    )
        async throws -> (pixel: [UInt8], result: PipelineResult)
    {
        let path = try directory.write(name, bytes)
        let result = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, \#(stages), encode { \#(encode) } }"#, source: path)
        let pixels = try #require(Fixtures.decoded(result.bytes.array))
        return (pixels[pixels.width / 2, pixels.height / 2], result)
    }

    @Test(
        "a Display-P3 PNG and a 16-bit PNG land within ΔE 3 of the sRGB colour",
        arguments: [
            ("p3.png", ["icc_export", "--output-profile", "p3"]),
            ("deep.png", ["colourspace", "rgb16"]),
        ])
    func converted(_ name: String, _ operation: [String]) async throws {
        let bytes = try #require(try await ImageFiles.converted(plain, to: name, in: directory, operation: operation))
        for stages in ["downsample { size = 32 }", "blur { sigma = 1 }"] {
            let (pixel, _) = try await centre(of: bytes, name: "in-" + name, stages: stages)
            #expect(
                Fixtures.deltaE(pixel, Self.colour) <= 3,
                "\(name) after \(stages): \(pixel), ΔE \(Fixtures.deltaE(pixel, Self.colour))")
        }
    }

    @Test("a CMYK JPEG's colour lands within ΔE 3 of its sRGB value through its embedded profile")
    func cmyk() async throws {
        // The colour in CMYK loses a little to the printing gamut: its sRGB value is what its own
        // profile says, as libvips' icc_transform computes it, not the colour before the round trip.
        let bytes = try #require(
            try await ImageFiles.converted(
                plain, to: "cmyk.jpg", in: directory, operation: ["icc_export", "--output-profile", "cmyk"]))
        let cmykFile = try directory.write("cmyk-source.jpg", bytes)
        let reference = try #require(
            try await ImageFiles.converted(
                cmykFile, to: "reference.png", in: directory,
                operation: ["icc_transform", "srgb", "--embedded"]))
        let expected = try #require(Fixtures.decoded(reference))[10, 10]
        #expect(Fixtures.info(bytes)?.bands == 4, "the fixture is CMYK")
        for stages in ["downsample { size = 32 }", "blur { sigma = 1 }"] {
            let (pixel, _) = try await centre(of: bytes, name: "in-cmyk.jpg", stages: stages)
            #expect(Fixtures.deltaE(pixel, expected) <= 3, "after \(stages): \(pixel) against \(expected)")
        }
    }

    @Test("the P3 fixture's own pixel values are far from the colour: the conversion is what brings them back")
    func fixtureIsReallyP3() async throws {
        let bytes = try #require(
            try await ImageFiles.converted(
                plain, to: "raw-p3.png", in: directory, operation: ["icc_export", "--output-profile", "p3"]))
        let raw = try #require(Fixtures.decoded(bytes))
        #expect(Fixtures.deltaE(raw[10, 10], Self.colour) > 6, "\(raw[10, 10])")
    }

    @Test("keep = { \"icc\" } keeps the colour profile and drops EXIF; strip drops both")
    func keepICC() async throws {
        let bytes = try #require(
            try await ImageFiles.converted(
                plain, to: "tagged.jpg", in: directory, operation: ["icc_export", "--output-profile", "p3"]))
        let kept = try await centre(of: bytes, name: "k.jpg", encode: #"format = "jpeg", keep = { "icc" }"#).result
        let stripped = try await centre(of: bytes, name: "s.jpg", encode: #"format = "jpeg""#).result
        #expect(Fixtures.info(kept.bytes.array)?.hasICC == true)
        #expect(Fixtures.info(kept.bytes.array)?.hasEXIF == false)
        #expect(Fixtures.info(stripped.bytes.array)?.hasICC == false)
        // A WebP that keeps its profile keeps the extended header that announces it, and no EXIF.
        let keptWebP = try await centre(of: bytes, name: "kw.jpg", encode: #"format = "webp", keep = { "icc" }"#).result
        #expect(ImageStageTests.chunks(keptWebP.bytes.array) == ["VP8X", "ICCP", "VP8 "])
    }

    @Test("a profile's colour transform is built once and shared by its images, with libvips' own pixels")
    func keptTransform() async throws {
        // A profile this test alone uses: Display P3 with a creation date of its own (header
        // bytes 24-35), so no other test's image adds to its count.
        let p3 = try #require(
            try await ImageFiles.converted(
                plain, to: "p3-source.jpg", in: directory, operation: ["icc_export", "--output-profile", "p3"]))
        var profile = try #require(Self.embeddedProfile(p3))
        withUnsafeBytes(of: UInt64.random(in: 1...UInt64.max)) { profile.replaceSubrange(24..<32, with: $0) }
        let profilePath = try directory.write("own.icc", profile)
        var tagged: [String] = []
        for (name, source) in [("a.jpg", Fixtures.path("examples/sample.jpg")), ("b.jpg", plain)] {
            let bytes = try #require(
                try await ImageFiles.converted(
                    source, to: name, in: directory, operation: ["icc_export", "--output-profile", profilePath]))
            #expect(Self.embeddedProfile(bytes) == profile, "\(name) carries the test's profile")
            tagged.append(try directory.write("tagged-" + name, bytes))
        }
        for path in tagged {
            _ = try await TestPipeline.run(
                #"profile "p" { fetch {}, decode {}, downsample { size = 64 }, encode { format = "png" } }"#,
                source: path)
        }
        #expect(ph_vips_colour_transform_uses(profile, profile.count) == 2, "one transform, used by both images")

        // The kept transform computes what libvips' icc_transform computes, to the bit.
        let reference = try #require(
            try await ImageFiles.converted(
                tagged[0], to: "reference.png", in: directory,
                operation: ["icc_transform", "srgb", "--embedded", "--intent", "relative"]))
        let ours = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, encode { format = "png" } }"#, source: tagged[0])
        let difference = try #require(Fixtures.difference(ours.bytes.array, reference))
        #expect(difference.max == 0, "largest difference from libvips: \(difference.max)")
        #expect(ph_vips_colour_transform_uses(profile, profile.count) == 3)
    }

    /// The ICC profile in a JPEG's one APP2 segment.
    static func embeddedProfile(_ jpeg: [UInt8]) -> [UInt8]? {
        var at = 2
        while at + 4 <= jpeg.count, jpeg[at] == 0xFF {
            let length = Int(jpeg[at + 2]) << 8 | Int(jpeg[at + 3])
            let body = jpeg[(at + 4)..<min(jpeg.count, at + 2 + length)]
            let tag = Array("ICC_PROFILE".utf8) + [0]
            if jpeg[at + 1] == 0xE2, body.starts(with: tag) { return Array(body.dropFirst(tag.count + 2)) }
            at += 2 + length
        }
        return nil
    }
}
