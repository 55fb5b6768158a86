import PipelineHost
import TestSupport
import Testing

/// Profile, fallback and overlay files are read whole only under a bound, checked before and
/// while reading.
@Suite("BoundedFile: whole files under a bound")
struct BoundedFileTests {
    @Test("a file is read whole; one over the bound, a directory or a missing file is refused")
    func bounds() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("profile.lua", Array(repeating: 0x2D, count: 5000))
        #expect(try BoundedFile.read(path, maxBytes: 5000).count == 5000)
        #expect(throws: BoundedFile.Refusal.self) { try BoundedFile.read(path, maxBytes: 4999) }
        #expect(throws: BoundedFile.Refusal.self) { try BoundedFile.read(directory.path, maxBytes: 5000) }
        #expect(throws: BoundedFile.Refusal.self) { try BoundedFile.read(directory.file("none"), maxBytes: 5000) }
    }

    /// /proc's files say they are empty and are not: the buffer, sized to the file, grows as
    /// they are read, and the bound still holds while it does.
    @Test("a file longer than its size says is read whole, and refused past the bound")
    func grows() throws {
        let status = try BoundedFile.read("/proc/self/status", maxBytes: 1 << 20)
        #expect(status.count > 100)
        #expect(String(decoding: status.prefix(5), as: UTF8.self) == "Name:")
        #expect {
            try BoundedFile.read("/proc/self/status", maxBytes: 64)
        } throws: { error in
            (error as? BoundedFile.Refusal)?.description == "is larger than 64 B"
        }
    }
}
