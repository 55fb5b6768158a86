import PipelineHost

/// Stands in for FacesPlugin in a build without the trait Faces: a profile that uses its
/// stages, or downsample's gravity = "faces", is refused at load, naming the file, the line and
/// how to build the detector in.
enum FacesMissing: PipelinePlugin {
    static let reason =
        "this pipelinehost is built without the face detector; build it with the package trait Faces "
        + "(FACES=1 scripts/run, or swift build --traits Faces)"

    static func register(in registry: inout StageRegistry) throws {
        registry.plan("faces", reason: reason)
        registry.plan("blur_faces", reason: reason)
    }
}
