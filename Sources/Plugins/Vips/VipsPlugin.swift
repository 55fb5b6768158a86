import CVips
import PipelineHost

/// Registers the libvips stages: decode, downsample, blur, encode, and the smaller image
/// operations (sharpen, rotate, flip, pad, trim, flatten, round_corners, overlay), the
/// placeholder stage and the info setting.
public enum VipsPlugin: PipelinePlugin {
    public static func register(in registry: inout StageRegistry) throws {
        for definition in [
            DecodeStage.definition, DownsampleStage.definition, BlurStage.definition, SharpenStage.definition,
            RotateStage.definition, FlipStage.definition, PadStage.definition, TrimStage.definition,
            FlattenStage.definition, RoundCornersStage.definition, OverlayStage.definition, EncodeStage.definition,
            PlaceholderStage.definition, InfoStage.definition,
        ] {
            try registry.register(definition)
        }
        ProcessCounters.register(
            .init(
                "jpeg_decodes_stopped_early",
                help:
                    "Progressive JPEGs decoded without the scans their scale never reads (PIPELINEHOST_JPEG_EARLY_STOP)"
            ) { Int(ph_jpeg_early_stops()) })
        ProcessCounters.register(
            .init(
                "avif_decodes_libavif",
                help: "AVIF files read through libavif (dav1d, libyuv) instead of libheif (PIPELINEHOST_AVIF_LIBAVIF)"
            ) { Int(ph_avif_libavif_decodes()) })
        ProcessCounters.register(
            .init(
                "gif_resizes_by_changed_boxes",
                help:
                    "GIF animations resized a changed box at a time, each frame from the one before (PIPELINEHOST_FRAME_CHANGES)"
            ) { Int(ph_frame_change_resizes()) })
    }

    /// Sets how many threads libvips uses inside one operation. The pipeline already runs
    /// about one CPU stage per core, so a batch wants 1 here; a single image wants the core
    /// count. Without a call, libvips uses the core count (or VIPS_CONCURRENCY).
    public static func setThreadsPerOperation(_ threads: Int) {
        VipsRuntime.setThreadsPerOperation(max(1, threads))
    }

    /// Whether this libvips writes `format` ("avif", "jxl", ...); starts libvips to ask.
    public static func canEncode(_ format: String) -> Bool { canWrite(format) }

    /// Whether this libvips writes `format` ("avif", "jxl", ...); starts libvips to ask.
    public static func canWrite(_ format: String) -> Bool {
        guard let chosen = EncodeStage.Format(rawValue: format), chosen != .auto else { return false }
        return (try? VipsRuntime.start()) != nil && ph_vips_can_save(chosen.code) != 0
    }
}

/// What libvips holds at one moment. A pipeline that has finished its work should hold no
/// objects and no open files: more means a leaked image.
package struct VipsUsage: Sendable, Equatable, CustomStringConvertible {
    /// Live VipsObjects: images, operations, sources.
    package let objects: Int
    /// Bytes and blocks libvips allocated through its own tracker (pixel buffers).
    package let trackedBytes: Int
    package let trackedAllocations: Int
    package let openFiles: Int

    package var description: String {
        "\(objects) objects, \(trackedBytes) tracked bytes in \(trackedAllocations) blocks, \(openFiles) open files"
    }
}

extension VipsPlugin {
    /// libvips' current objects, tracked memory and files, for this package's leak checks (the
    /// soak run); `package`, not public: a test hook is not part of the plugin API.
    package static func usage() -> VipsUsage {
        guard (try? VipsRuntime.start()) != nil else {
            return VipsUsage(objects: 0, trackedBytes: 0, trackedAllocations: 0, openFiles: 0)
        }
        let usage = ph_vips_current_usage()
        return VipsUsage(
            objects: Int(usage.objects), trackedBytes: Int(usage.tracked_bytes),
            trackedAllocations: Int(usage.tracked_allocations), openFiles: Int(usage.open_files))
    }
}
