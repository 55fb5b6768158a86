import CVips
import PipelineHost

/// What a source GIF's blocks say about the frames decode keeps (ph_gif_palettes.c), read at
/// decode without decoding a pixel and carried along with the image.
struct GIFFacts: Sendable {
    /// The colour table each frame is drawn from, for a GIF encode to keep where it still fits
    /// the frame, as gifsicle does, instead of quantizing it afresh.
    let palettes: [ph_gif_palette]
    /// Every frame is opaque once composed. libvips still reads four bands whenever a frame has
    /// a transparent index (encoders use one to skip unchanged pixels, and ffmpeg gives the
    /// first frame one too, unused); the alpha is dropped
    /// when the frames are opened, so a resize works on three bands of 8 bits rather than four
    /// premultiplied floats.
    let opaque: Bool

    /// The facts of the first `frames` frames of `bytes`, or nil for anything but a GIF.
    init?(_ bytes: ImageBytes, frames: Int) {
        var read = [ph_gif_palette](repeating: ph_gif_palette(), count: max(1, frames))
        var opaque: Int32 = 0
        let count = read.withUnsafeMutableBufferPointer {
            ph_gif_read_palettes(bytes.baseAddress, bytes.count, $0.baseAddress, Int32($0.count), &opaque)
        }
        guard count > 0 else { return nil }
        palettes = Array(read.prefix(Int(count)))
        // Where the blocks leave it to the first frame's pixels, decoding that frame costs one
        // frame; the alternative is resizing every frame in floats.
        self.opaque = ph_gif_composes_opaque(bytes.baseAddress, bytes.count, opaque) == 1
    }
}
