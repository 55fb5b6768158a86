import Foundation
import PipelineHost
import TestSupport
import Testing

/// An animated AVIF (an AV1 image sequence) as a source: read through libavif, since libvips'
/// libheif reads none, and then an animation like any other, checked frame by frame against
/// what libavif itself decodes.
@Suite("animated AVIF input keeps its frames", .needs(.pixels))
struct AnimatedAVIFInputTests {
    static let frames = 4, width = 96, height = 64
    let directory: TemporaryDirectory
    /// A pan across the sample photo, 24 px a frame, written as an animated AVIF by encode.
    let sequence: String
    let sequenceBytes: [UInt8]

    init() async throws {
        directory = try TemporaryDirectory()
        let pan = try directory.write(
            "pan.gif", Fixtures.photoPan(frames: Self.frames, width: Self.width, height: Self.height, step: 24))
        let avif = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, encode { format = "avif", quality = 90 } }"#, source: pan)
        sequenceBytes = avif.bytes.array
        sequence = try directory.write("pan.avif", sequenceBytes)
    }

    func run(_ stages: String, decode: String = "decode {}") async throws -> PipelineResult {
        try await TestPipeline.run(#"profile "p" { fetch {}, \#(decode), \#(stages) }"#, source: sequence)
    }

    @Test("through a resize to WebP, frame k of the answer is frame k of the source, with its delay")
    func framesInOrder() async throws {
        let source = try #require(Fixtures.avifFrames(sequenceBytes))
        try #require(source.frames.height == Self.height * Self.frames)
        let answer = try await run(#"downsample { size = 48 }, encode { format = "webp", lossless = true }"#)
        let info = try #require(Fixtures.info(answer.bytes.array))
        #expect(info.format == "webp" && info.pages == Self.frames && info.width == 48)
        let frames = try #require(Fixtures.decodedFrames(answer.bytes.array))
        for k in 0..<Self.frames {
            let scores = (0..<Self.frames).map { j in halvedPSNR(frames, frame: k, source: source.frames, frame: j) }
            let best = scores.indices.max { scores[$0] < scores[$1] }
            #expect(best == k && scores[k] > 30, "frame \(k): \(scores.map { Int($0) })")
        }
    }

    @Test("a cover crop keeps every frame, and format = \"source\" writes an animated AVIF again")
    func coverToSource() async throws {
        let answer = try await run(#"downsample { size = 32, fit = "cover" }, encode { format = "source" }"#)
        #expect(answer.format == "avif")
        let frames = try #require(Fixtures.avifFrames(answer.bytes.array))
        #expect(frames.frames.width == 32 && frames.frames.height == 32 * Self.frames)
        #expect(frames.delays.count == Self.frames)
    }

    @Test("frames = 1 is a still of frame one; max_frames refuses it from the header")
    func limits() async throws {
        let still = try await run(#"encode { format = "png" }"#, decode: "decode { frames = 1 }")
        let info = try #require(Fixtures.info(still.bytes.array))
        #expect(info.pages == 1 && info.height == Self.height)
        let error = try await TestPipeline.failure(
            #"profile "p" { fetch {}, decode { max_frames = 3 }, encode { format = "webp" } }"#, source: sequence)
        #expect(error?.kind == .pixelLimit)
        #expect(error?.reason == "image has 4 frames, over max_frames (3)", "\(error?.reason ?? "")")
        let tooBig = try await TestPipeline.failure(
            #"profile "p" { fetch {}, decode { max_pixels = 5000 }, encode { format = "webp" } }"#, source: sequence)
        #expect(tooBig?.kind == .pixelLimit)
        #expect(tooBig?.reason.hasPrefix("image is 96x64 a frame") == true, "\(tooBig?.reason ?? "")")
    }

    @Test("a cut-off sequence is refused from its header, naming the cause")
    func cutOff() async throws {
        let cut = try directory.write("cut.avif", Array(sequenceBytes.prefix(sequenceBytes.count * 3 / 4)))
        let error = try await TestPipeline.failure(
            #"profile "p" { fetch {}, decode {}, encode { format = "webp" } }"#, source: cut)
        #expect(error?.kind == .decodeFailed, "\(String(describing: error))")
        // The cause, not the whole line: another test's failure at the same moment can add its
        // message after this one's (docs/LIMITS.md).
        #expect(error?.reason.hasPrefix("cannot read the image header: ") == true, "\(error?.reason ?? "")")
        #expect(
            error?.reason.contains("ph_avif_sequence: not an AVIF sequence libavif reads: BMFF parsing failed") == true,
            "\(error?.reason ?? "")")
    }

    /// Frames are decoded when their pixels are first asked for, after decode's checks and the
    /// memory budget's draw: a frame that does not decode fails then, as the error says.
    @Test("a sequence whose last frames are garbage opens, then fails at their pixels")
    func corruptFrames() async throws {
        let mdat = try #require(Self.box("mdat", in: sequenceBytes))
        var corrupt = sequenceBytes
        for index in (mdat.lowerBound + mdat.count * 3 / 4)..<mdat.upperBound { corrupt[index] = 0xFF }
        let path = try directory.write("corrupt.avif", corrupt)
        let error = try await TestPipeline.failure(
            #"profile "p" { fetch {}, decode {}, encode { format = "webp" } }"#, source: path)
        // Opened (no "cannot read the image header"), then failed where the pixels were read.
        #expect(error?.kind == .decodeFailed, "\(String(describing: error))")
        #expect(error?.reason.hasPrefix("decode failed: ") == true, "\(error?.reason ?? "")")
        #expect(
            error?.reason.contains("ph_avif_sequence: frame 4 does not decode: ") == true, "\(error?.reason ?? "")")
    }

    /// The payload of the top-level ISO BMFF box `type`: each box is a 32-bit big-endian size
    /// (header included) and a four-letter type.
    static func box(_ type: String, in bytes: [UInt8]) -> Range<Int>? {
        var offset = 0
        while offset + 8 <= bytes.count {
            let size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            guard size >= 8, offset + size <= bytes.count else { return nil }
            if String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self) == type {
                return offset + 8..<offset + size
            }
            offset += size
        }
        return nil
    }

    /// PSNR of frame `k` of `answer` (half the source's size) against frame `j` of `source`
    /// halved by averaging 2 x 2 pixels.
    func halvedPSNR(_ answer: Fixtures.Pixels, frame k: Int, source: Fixtures.Pixels, frame j: Int) -> Double {
        let (w, h) = (Self.width / 2, Self.height / 2)
        var squares = 0.0
        for y in 0..<h {
            for x in 0..<w {
                let got = answer[x, k * h + y]
                for band in 0..<3 {
                    var sum = 0
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                        sum += Int(source[2 * x + dx, j * Self.height + 2 * y + dy][band])
                    }
                    let difference = Double(got[band]) - Double(sum) / 4
                    squares += difference * difference
                }
            }
        }
        let mean = squares / Double(3 * w * h)
        return mean == 0 ? 99 : 10 * log10(255 * 255 / mean)
    }
}
