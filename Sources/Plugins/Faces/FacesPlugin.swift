import CFaces
import PipelineHost
import VipsPlugin

/// Registers `faces`, which finds faces (OpenCV's cascades, through the CFaces target), and
/// `blur_faces`. downsample's `gravity = "faces"` crops around what `faces` found, and info
/// reports it. An example of a plugin with a native dependency (docs/PLUGINS.md): the C++
/// stays in CFaces behind C functions, so no Swift target needs C++ interop.
///
/// The stock `pipelinehost` has it when built with the package trait Faces
/// (`FACES=1 scripts/run`); it links OpenCV, which every process would otherwise load.
public enum FacesPlugin: PipelinePlugin {
    public static func register(in registry: inout StageRegistry) throws {
        try registry.register(FacesStage.definition)
        try registry.register(BlurFacesStage.definition)
        ProcessCounters.register(
            .init("faces_detections", help: "Images searched for faces (each source once, then kept with its bytes)") {
                Int(ph_faces_detections())
            })
    }
}
