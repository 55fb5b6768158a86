import CVips
import Foundation
import TestSupport
import Testing

/// A screen recording's frames change in a few pixels each; written as GIF with a colour table a
/// frame, the tables were most of the file. Its frames share one table made from all of them
/// (ph_gif_save.c, plan_recording), where that table draws each frame within 40 dB.
@Suite("A screen recording is written as GIF with one colour table", .needs(.pixels))
struct RecordingTableTests {
    static let frames = FrameChangeTests.frames
    static let stages = "downsample { size = 120 },"

    private func written(_ gif: HandGIF, through stages: String = stages, in directory: TemporaryDirectory)
        async throws -> (path: String, bytes: [UInt8])
    {
        let path = try directory.write("\(UUID().uuidString).gif", gif.bytes)
        let result = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode { frames = \#(Self.frames) }, \#(stages) encode { format = "gif" } }"#,
            source: path)
        return (path, result.bytes.array)
    }

    @Test("most frames draw with the global table, every frame within 40 dB of its exact resize, in half the bytes")
    func oneTable() async throws {
        let directory = try TemporaryDirectory()
        let recording = FrameChangeTests.sparse(disposals: false)
        let (path, bytes) = try await written(recording, in: directory)
        let own = try #require(HandGIF.ownTables(in: bytes))
        #expect(own.count == Self.frames)
        // Most frames draw with it; a few whose rarest blends it merged away (a pixel further
        // than 48 from its colour is one too many in a box of a few dozen) take their own.
        let global = own.dropFirst().filter { !$0 }.count
        #expect(
            global * 4 >= (Self.frames - 1) * 3, "frames with a table of their own: \(own.indices.filter { own[$0] })")

        let exact = try await TestPipeline.stackedFrames(of: path, frames: Self.frames, through: Self.stages)
        let shown = try #require(Fixtures.decodedFrames(bytes))
        try #require(shown.width == exact.width && shown.height == exact.height)
        let errors = GIFWriterTests.frameErrors(shown, exact, count: Self.frames)
        let over = errors.indices.filter { errors[$0] > PH_GIF_KEEP_ERROR }
        #expect(over.isEmpty, "frames past 40 dB: \(over.map { "\($0): \(errors[$0])" })")

        // The same pictures stored as whole frames are resized whole, and each later frame
        // keeps a table of its own: what every recording's frames had before.
        let whole = try await written(FrameChangeTests.whole(recording), in: directory).bytes
        let wholeOwn = try #require(HandGIF.ownTables(in: whole))
        #expect(wholeOwn.dropFirst().filter { $0 }.count >= Self.frames / 2)
        #expect(bytes.count * 2 <= whole.count, "\(bytes.count) bytes, against \(whole.count) with a table a frame")
    }

    /// The writer reads a recording's frames only inside the boxes that changed while they are the
    /// frames the resize made; a stage after it moves the changes (a flip puts the typing at the
    /// other edge), and there every frame is read whole.
    @Test(
        "a stage after the resize is written as it draws: every frame within 40 dB of its exact flip",
        arguments: [#"flip { direction = "vertical" },"#, "flip {},"])
    func stageAfterResize(flip: String) async throws {
        let directory = try TemporaryDirectory()
        let stages = Self.stages + " " + flip
        let (path, bytes) = try await written(FrameChangeTests.sparse(disposals: false), through: stages, in: directory)
        let exact = try await TestPipeline.stackedFrames(of: path, frames: Self.frames, through: stages)
        let shown = try #require(Fixtures.decodedFrames(bytes))
        try #require(shown.width == exact.width && shown.height == exact.height)
        let errors = GIFWriterTests.frameErrors(shown, exact, count: Self.frames)
        let over = errors.indices.filter { errors[$0] > PH_GIF_KEEP_ERROR }
        #expect(over.isEmpty, "frames past 40 dB: \(over.map { "\($0): \(errors[$0])" })")
    }
}
