import CVips
import Foundation
import PipelineHost
import TestSupport
import Testing

/// libvips keeps one error buffer for the process; ph_vips_errors.c keeps a numbered log
/// instead, so each failure reads the messages logged since its operation began and no other
/// thread can take, clear or silence them (CI once read "unknown libvips error" where an AVIF
/// frame's cause should have been: another test's failure had taken it).
@Suite("libvips' error messages, each failure's own", .needs(.pixels))
struct ErrorLogTests {
    let directory: TemporaryDirectory
    init() async throws {
        directory = try TemporaryDirectory()
        // A first image through the pipeline starts libvips, once for the process.
        let small = try directory.write("small.png", Fixtures.quadrants(width: 16, height: 16, format: .png))
        _ = try await TestPipeline.run(#"profile "p" { fetch {}, decode {}, encode {} }"#, source: small)
    }

    /// Opens `bytes` as an image, which fails, and returns the mark taken before.
    private func failToOpen(_ bytes: [UInt8]) -> UInt64 {
        let mark = ph_vips_error_mark()
        let image = bytes.withUnsafeBytes { ph_vips_open($0.baseAddress, $0.count, 1) }
        #expect(image == nil)
        return mark
    }

    private func messages(since mark: UInt64) -> String? {
        guard let text = ph_vips_errors_since(mark) else { return nil }
        defer { ph_vips_free(text) }
        return String(cString: text)
    }

    /// Logs `message` as a plugin's C code would, through libvips' vips_error.
    private func log(_ message: String) {
        message.withCString { text in withVaList([text]) { vips_verror("ErrorLogTests", "%s", $0) } }
    }

    static let notAnImage = Array("not an image at all, just text".utf8)
    static var cutJPEG: [UInt8] { Array(Fixtures.quadrants(width: 64, height: 64).prefix(40)) }
    /// Its header reads; its pixels do not.
    static var cutPNG: [UInt8] { Array(Fixtures.quadrants(width: 64, height: 64, format: .png).prefix(100)) }

    @Test("libvips' calls to its error functions reach the log")
    func interposed() {
        #expect(ph_vips_errors_interposed() == 1)
    }

    /// The thread's own messages come first: other tests fail at the same moment and add theirs.
    @Test("a failure read after a later one still has its own cause")
    func interleaved() throws {
        let first = failToOpen(Self.notAnImage)
        let second = failToOpen(Self.cutJPEG)
        let secondText = try #require(messages(since: second))
        let firstText = try #require(messages(since: first))
        #expect(secondText.hasPrefix("VipsJpeg: Premature end of input file"), "\(secondText)")
        #expect(
            firstText.hasPrefix(
                "VipsForeignLoad: buffer is not in a known format\nVipsJpeg: Premature end of input file"),
            "\(firstText)")
    }

    @Test("a clear on another thread leaves this thread's cause")
    func clearElsewhere() {
        // A text of this test's own: other tests log libvips' usual ones at the same moment.
        let mark = ph_vips_error_mark(), message = "kept through another thread's clear \(UUID())"
        log(message)
        let cleared = DispatchSemaphore(value: 0)
        Thread {
            vips_error_clear()
            cleared.signal()
        }.start()
        cleared.wait()
        #expect(messages(since: mark)?.hasPrefix("ErrorLogTests: \(message)") == true)
    }

    @Test("a clear forgets the clearing thread's own messages, as libvips' did")
    func clearHere() {
        let mark = ph_vips_error_mark(), message = "cleared here \(UUID())"
        log(message)
        #expect(messages(since: mark)?.contains(message) == true)
        vips_error_clear()
        #expect(messages(since: mark)?.contains(message) != true)
    }

    @Test("a freeze on another thread does not silence this one; a freeze here does")
    func freeze() throws {
        let frozen = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        let thawed = DispatchSemaphore(value: 0)
        Thread {
            vips_error_freeze()
            frozen.signal()
            done.wait()
            vips_error_thaw()
            thawed.signal()
        }.start()
        frozen.wait()
        let mark = ph_vips_error_mark(), heard = "logged while another thread is frozen \(UUID())"
        log(heard)
        done.signal()
        thawed.wait()
        #expect(messages(since: mark)?.contains(heard) == true)

        let silent = "logged while frozen \(UUID())"
        vips_error_freeze()
        log(silent)
        vips_error_thaw()
        #expect(messages(since: mark)?.contains(silent) != true)
    }

    /// libpng only warns, hundreds of times, for a file cut inside its header; libvips logs no
    /// error. The warning is the cause, said once.
    @Test("a failure that logs no error names libvips' warning")
    func warningOnly() async throws {
        let cut = try directory.write("header.png", Array(Self.cutPNG.prefix(20)))
        let error = try await TestPipeline.failure(#"profile "p" { fetch {}, decode {}, encode {} }"#, source: cut)
        // Another test's failure at the same moment can add its cause after this one.
        #expect(
            error?.reason.hasPrefix("cannot read the image header: not enough data") == true, "\(error?.reason ?? "")")
        #expect(error?.reason.components(separatedBy: "not enough data").count == 2, "\(error?.reason ?? "")")
    }

    /// The pipeline end to end: images failing at the same moment each name their own cause.
    @Test("16 broken images failing at once each name their own libvips cause")
    func concurrentFailures() async throws {
        let jpeg = try directory.write("cut.jpg", Self.cutJPEG)
        let png = try directory.write("cut.png", Self.cutPNG)
        let profile = #"profile "p" { fetch {}, decode { formats = { "jpeg", "png" } }, encode {} }"#
        try await withThrowingTaskGroup(of: (Bool, PipelineError?).self) { group in
            for index in 0..<16 {
                group.addTask {
                    let isJPEG = index.isMultiple(of: 2)
                    return (isJPEG, try await TestPipeline.failure(profile, source: isJPEG ? jpeg : png))
                }
            }
            for try await (isJPEG, error) in group {
                let reason = error?.reason ?? ""
                // A failure at the same moment can add its cause after this one's.
                if isJPEG {
                    #expect(reason.hasPrefix("cannot read the image header: VipsJpeg: Premature end"), "\(reason)")
                } else {
                    #expect(reason.hasPrefix("decode failed: "), "\(reason)")
                    #expect(reason.contains("vipspng: libpng read error"), "\(reason)")
                }
            }
        }
    }
}
