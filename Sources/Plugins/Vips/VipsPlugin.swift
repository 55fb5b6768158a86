import PipelineHost

/// Registers the libvips stages: decode, downsample, blur, encode.
public enum VipsPlugin: PipelinePlugin {
    public static func register(in registry: inout StageRegistry) throws {
        try registry.register(DecodeStage.definition)
        try registry.register(DownsampleStage.definition)
        try registry.register(BlurStage.definition)
        try registry.register(EncodeStage.definition)
    }
}
