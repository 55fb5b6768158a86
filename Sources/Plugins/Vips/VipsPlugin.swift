import CVips
import PipelineHost

/// Registers the libvips stages: decode, downsample, blur, encode.
public enum VipsPlugin: PipelinePlugin {
    public static func register(in registry: inout StageRegistry) throws {
        try registry.register(DecodeStage.definition)
        try registry.register(DownsampleStage.definition)
        try registry.register(BlurStage.definition)
        try registry.register(EncodeStage.definition)
    }

    /// Sets how many threads libvips uses inside one operation. The pipeline already runs
    /// about one CPU stage per core, so a batch wants 1 here; a single image wants the core
    /// count. Without a call, libvips uses the core count (or VIPS_CONCURRENCY).
    public static func setThreadsPerOperation(_ threads: Int) {
        guard (try? VipsRuntime.start()) != nil else { return }
        ph_vips_set_concurrency(Int32(max(1, threads)))
    }
}
