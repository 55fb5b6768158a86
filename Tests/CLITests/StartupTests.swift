import Foundation
import TestSupport
import Testing

/// libvips' modules (HEIF, JPEG XL, PDF, OpenSlide: about 40 ms a run) open when a run first
/// needs one, and ImageMagick's only when a profile lists "magick", its loaders staying blocked.
/// glibc's loader says which libraries a process opened (LD_DEBUG=files).
@Suite("pipelinehost: libvips' modules open when needed", .needs(.process))
struct StartupTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    /// The run's own messages, and whether it opened each of `libraries` (LD_DEBUG's lines start
    /// with the process id, and are many: they are not printed on a failure).
    func run(_ profile: String, _ source: String, libraries: [String]) async throws -> (
        status: Int32, messages: [String], opened: [Bool]
    ) {
        let path = try directory.write("p.lua", Array(profile.utf8))
        let run = try await CLIProcess.run(
            ["run", path, source, "-o", directory.file("out")], in: Fixtures.root.path,
            environment: ["LD_DEBUG": "files"])
        let lines = run.stderr.split(separator: "\n").map(String.init)
        let debug = lines.filter { $0.first?.isWhitespace == true }
        return (
            run.status, lines.filter { $0.first?.isWhitespace != true },
            libraries.map { library in debug.contains { $0.contains(library) } }
        )
    }

    @Test("a PSD is an unsupported format and libMagickCore never loads; listing magick loads it, blocked")
    func imageMagickOnDemand() async throws {
        let psd = try directory.write("file.psd", ImageFiles.psd(width: 4, height: 2, rgb: [0, 128, 255]))
        let libraries = ["vips-heif.so", "libMagickCore"]
        let plain = try await run(
            #"profile "p" { fetch {}, decode {}, encode { format = "png" } }"#, psd, libraries: libraries)
        #expect(plain.status == 1)
        #expect(plain.messages.contains { $0.hasSuffix("file.psd: unsupported image format") }, "\(plain.messages)")
        #expect(plain.opened == [true, false], "the other modules still open")

        let listed = try await run(
            #"profile "p" { fetch {}, decode { formats = { "png", "magick" } }, encode { format = "png" } }"#, psd,
            libraries: libraries)
        #expect(listed.status == 1)
        #expect(
            listed.messages.contains {
                $0.hasSuffix("file.psd: image format 'magick' is blocked: libvips' magick loader is untrusted")
            },
            "\(listed.messages)")
        #expect(listed.opened == [true, true])
    }

    @Test("a JPEG made into a PNG opens no module; made into an AVIF, the HEIF one")
    func modulesForOutput() async throws {
        let libraries = ["vips-heif.so", "vips-poppler.so", "libMagickCore"]
        let png = try await run(
            #"profile "p" { fetch {}, decode {}, downsample { size = 64 }, encode { format = "png" } }"#,
            "examples/sample.jpg", libraries: libraries)
        #expect(png.status == 0, "\(png.messages)")
        #expect(png.opened == [false, false, false])
        let avif = try await run(
            #"profile "p" { fetch {}, decode {}, downsample { size = 64 }, encode { format = "avif" } }"#,
            "examples/sample.jpg", libraries: libraries)
        #expect(avif.status == 0, "\(avif.messages)")
        #expect(avif.opened == [true, true, false])
    }
}
