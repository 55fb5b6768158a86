import CVips
import Foundation
import TestSupport
import Testing

/// libvips 8.14 reduces across a row (reduceh) one multiply at a time; ph_reduceh.c does the
/// same sums two taps at a time. Nothing a user sees may change: the pixels must be libvips'
/// own, byte for byte, at every band count, shrink and kernel its resize asks for.
@Suite("the horizontal reduce gives libvips' own bytes", .needs(.pixels))
struct ReduceAcrossTests {
    /// 8-bit pixels of the sample photo: `bands` of them (grey, grey and alpha, RGB, RGBA; the
    /// alpha a ramp, so it is not constant), `width` by `height` from the top left.
    static func photo(bands: Int, width: Int, height: Int) throws -> UnsafeMutablePointer<VipsImage> {
        let sample = Fixtures.sample
        let opened = try #require(sample.withUnsafeBytes { ph_vips_open($0.baseAddress, $0.count, 1) })
        defer { g_object_unref(UnsafeMutableRawPointer(opened)) }
        var size = 0
        let memory = try #require(vips_image_write_to_memory(opened, &size))
        defer { g_free(memory) }
        let rgb = memory.assumingMemoryBound(to: UInt8.self)
        let full = Int(vips_image_get_width(opened))
        var pixels = [UInt8]()
        pixels.reserveCapacity(width * height * bands)
        for y in 0..<height {
            for x in 0..<width {
                let at = (y * full + x) * 3
                let (r, g, b) = (rgb[at], rgb[at + 1], rgb[at + 2])
                let grey = UInt8((Int(r) * 3 + Int(g) * 6 + Int(b)) / 10)
                let alpha = UInt8((x * 7 + y * 3) % 256)
                switch bands {
                case 1: pixels += [grey]
                case 2: pixels += [grey, alpha]
                case 3: pixels += [r, g, b]
                default: pixels += [r, g, b, alpha]
                }
            }
        }
        let image = pixels.withUnsafeBytes {
            vips_image_new_from_memory_copy(
                $0.baseAddress, $0.count, Int32(width), Int32(height), Int32(bands), VIPS_FORMAT_UCHAR)
        }
        return try #require(image)
    }

    static func bytes(_ image: UnsafeMutablePointer<VipsImage>) throws -> (width: Int, pixels: [UInt8]) {
        var size = 0
        let memory = try #require(vips_image_write_to_memory(image, &size), "\(String(cString: vips_error_buffer()))")
        defer { g_free(memory) }
        return (Int(vips_image_get_width(image)), Array(UnsafeRawBufferPointer(start: memory, count: size)))
    }

    static func reduced(
        _ image: UnsafeMutablePointer<VipsImage>, by shrink: Double, kernel: VipsKernel, gap: Double, libvips: Bool
    ) throws -> (width: Int, pixels: [UInt8]) {
        var out: UnsafeMutablePointer<VipsImage>?
        let reduce = libvips ? ph_vips_reduceh_libvips : ph_vips_reduceh
        let status = reduce(image, shrink, Int32(kernel.rawValue), gap, &out)
        #expect(status == 0, "shrink \(shrink), kernel \(kernel), gap \(gap): \(String(cString: vips_error_buffer()))")
        let result = try #require(out)
        defer { g_object_unref(UnsafeMutableRawPointer(result)) }
        return try bytes(result)
    }

    @Test(
        "one to four bands, shrinks from 1.3 to 9.7, every kernel resize uses, with and without a gap",
        arguments: [1, 2, 3, 4])
    func sameBytes(bands: Int) throws {
        // 613 is no multiple of any shrink here, so the last pixels of a row have their taps
        // past the end of the input: those go through the one-tap-at-a-time loop.
        let image = try Self.photo(bands: bands, width: 613, height: 37)
        defer { g_object_unref(UnsafeMutableRawPointer(image)) }
        let kernels = [
            VIPS_KERNEL_LANCZOS3, VIPS_KERNEL_LANCZOS2, VIPS_KERNEL_LINEAR, VIPS_KERNEL_CUBIC, VIPS_KERNEL_MITCHELL,
            VIPS_KERNEL_NEAREST,
        ]
        for kernel in kernels {
            for shrink in [1.3, 2.0, 2.4, 3.07, 9.7] {
                for gap in [0.0, 2.0] {
                    let before = ph_reduceh_builds()
                    let ours = try Self.reduced(image, by: shrink, kernel: kernel, gap: gap, libvips: false)
                    let built = ph_reduceh_builds() - before
                    let theirs = try Self.reduced(image, by: shrink, kernel: kernel, gap: gap, libvips: true)
                    let what = "\(bands) bands, \(kernel), shrink \(shrink), gap \(gap)"
                    #expect(ours.width == theirs.width, "\(what)")
                    let differing = zip(ours.pixels, theirs.pixels).enumerated().filter { $0.element.0 != $0.element.1 }
                    #expect(
                        ours.pixels.count == theirs.pixels.count && differing.isEmpty,
                        "\(what): \(differing.count) bytes differ, the first at \(differing.first?.offset ?? 0)")
                    // Every case leaves a residual reduce, ours: the comparison is not libvips'
                    // with itself. (Other tests may build reduces meanwhile: at least one.)
                    #expect(built >= 1, "\(what): built \(built)")
                }
            }
        }
    }

    @Test("libvips' resize reaches it: a photo downsampled through a profile builds one")
    func resizeReachesIt() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("input.jpg", Fixtures.sample)
        let before = ph_reduceh_builds()
        // 250 is not a JPEG scale of the 2400x1600 sample: a reduce follows the shrink-on-load.
        _ = try await TestPipeline.run(
            #"profile "p" { fetch {}, decode {}, downsample { size = 250 }, encode {} }"#, source: path)
        #expect(ph_reduceh_builds() > before)
    }
}
