import FetchPlugin
import Foundation
import PipelineHost
import TestSupport
import Testing

/// A local file's source key is its path, and the file there can change: the file's version is
/// in every key, so no tier answers for the new picture with what it made of the old one.
@Suite("local files: a changed file is made afresh, from every tier", .needs(.pixels))
struct LocalFileVersionTests {
    let cache: TemporaryDirectory
    let files: TemporaryDirectory

    init() throws {
        cache = try TemporaryDirectory()
        files = try TemporaryDirectory()
    }

    func pipeline() throws -> Pipeline {
        Pipeline(
            profiles: try TestPipeline.load(PipelineCacheTests.profile(variant: "memory = true, disk = true")),
            configuration: TestPipeline.configuration(cacheIn: cache))
    }

    /// Writes a picture of one colour over `name`, in place (the same inode), dated `age`
    /// seconds ago: a file edited where it lies.
    func paint(_ name: String, _ colour: [UInt8], age: TimeInterval) throws -> String {
        let path = try files.write(name, Fixtures.painted(width: 400, height: 300, format: .jpeg) { _, _ in colour })
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: path)
        return path
    }

    func centre(_ result: PipelineResult) throws -> [UInt8] {
        let pixels = try #require(Fixtures.decoded(result.bytes.array))
        return pixels[pixels.width / 2, pixels.height / 2]
    }

    @Test("the same pipeline, and a new one on the same cache directory, show the file as it is now")
    func changed() async throws {
        let path = try paint("cover.jpg", [220, 30, 30], age: 60)
        let request = ImageRequest(source: path, profile: "thumbnail")
        let first = try pipeline()
        let red = try centre(try await first.image(for: request))
        #expect(red[0] > 180 && red[2] < 80, "\(red)")
        await first.flushCache()

        _ = try paint("cover.jpg", [30, 30, 220], age: 0)
        let blue = try centre(try await first.image(for: request))
        #expect(blue[2] > 180 && blue[0] < 80, "the memory tier answered with the old picture: \(blue)")
        await first.flushCache()
        let other = try pipeline()
        let second = try await other.image(for: request)
        #expect(second.diskHit, "the new picture's variant, kept on disk")
        let again = try centre(second)
        #expect(again[2] > 180 && again[0] < 80, "the disk tier answered with the old picture: \(again)")

        // A purge names the path, and reaches every version's entries.
        let purged = await other.purge(sources: [path])
        #expect(purged.removed["disk", default: 0] >= 4, "two versions' original and variant: \(purged)")
        #expect(try await pipeline().image(for: request).diskHit == false)
    }

    @Test("a file: URL names the same file, at the same version, as its path")
    func fileURL() {
        #expect(FileVersion.of("/no/such/file.jpg") == nil)
        let path = files.file("a b.jpg")
        #expect(FileManager.default.createFile(atPath: path, contents: Data([1, 2, 3])))
        let version = FileVersion.of(path)
        #expect(version != nil)
        let escaped = "file://" + path.replacingOccurrences(of: " ", with: "%20")
        #expect(FileVersion.of(escaped) == version)
        #expect(FileVersion.of("file://localhost" + path.replacingOccurrences(of: " ", with: "%20")) == version)
        #expect(FileVersion.of("file://elsewhere" + path.replacingOccurrences(of: " ", with: "%20")) == nil)
        #expect(FileVersion.of("https://example.com" + path) == nil)
    }
}
