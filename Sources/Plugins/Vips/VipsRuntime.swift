import CVips
import PipelineHost

/// Starts libvips once per process.
///
/// libvips starts when the first image is decoded, not when a profile loads, and its modules
/// (HEIF, JPEG XL, PDF, OpenSlide: about 40 ms) open only when a format needs them
/// (ph_vips_modules.c): a run of JPEGs, or one served wholly from the cache, never opens them.
enum VipsRuntime {
    /// Threads per operation asked for before libvips started, and whether it has.
    private static let state = Locked((threads: 0, started: false))

    /// libvips is started on first use: operation cache off (the pipeline caches results itself),
    /// untrusted loaders blocked, the threads per operation asked for (else libvips' default).
    private static let startError: String? = {
        let threads = state.withLock { state in
            state.started = true
            return state.threads
        }
        // libjpeg's kept blocks stay resident outside the memory budget: a sixteenth of the
        // process's memory limit at most, so a small container keeps little.
        ph_jpeg_set_kept_limit(min(128 << 20, MemoryLimit.detected.bytes / 16))
        let errors = VipsErrorMark()
        return ph_vips_init("pipelinehost", Int32(threads)) == 0 ? nil : errors.messages
    }()

    static func start() throws(PipelineError) {
        if let startError { throw PipelineError(.stageFailed, "libvips failed to start: \(startError)") }
    }

    /// Threads libvips uses inside one operation: applied now if libvips runs, else when it starts.
    static func setThreadsPerOperation(_ threads: Int) {
        let started = state.withLock { state in
            state.threads = threads
            return state.started
        }
        if started, (try? start()) != nil { ph_vips_set_concurrency(Int32(threads)) }
    }

    /// Unblocks libvips' JPEG XL loader (marked untrusted): a profile listed "jxl" in decode's
    /// formats. Process-wide, and idempotent; other profiles still refuse jxl by their formats.
    static func allowJXLInput() {
        _ = allowedJXL
    }

    private static let allowedJXL: Void = ph_vips_allow_jxl_input()

    /// Opens libvips' ImageMagick module, which no other format opens: a profile listed
    /// "magick" in decode's formats. Its loaders stay blocked; the module only names the files
    /// ImageMagick alone reads as blocked, not as unknown.
    static func openImageMagickModule() {
        _ = openedImageMagick
    }

    private static let openedImageMagick: Void = ph_vips_open_magick()
}
