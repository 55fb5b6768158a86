// swift-tools-version: 6.2
import PackageDescription

// A third party's own package: it depends on pipelinehost (here by path; by URL in real life),
// adds one stage in a plugin target of its own, and builds its own pipelinehost executable with
// that stage registered next to the built-in ones. No fork, no edit of pipelinehost. The
// executable needs a name of its own: SwiftPM gives "pipelinehost" to the dependency's.
let package = Package(
    name: "ExternalPlugin",
    products: [
        .executable(name: "pipelinehost-grayscale", targets: ["GrayscaleHost"])
    ],
    dependencies: [
        .package(name: "pipelinehost", path: "../..")
    ],
    targets: [
        // A C target of our own for the variadic libvips calls Swift cannot make. CVips gives it
        // the libvips headers (and the host's own wrappers, should it want them).
        .target(name: "CGrayscale", dependencies: [.product(name: "CVips", package: "pipelinehost")]),
        .target(
            name: "GrayscalePlugin",
            dependencies: [
                "CGrayscale",
                .product(name: "PipelineHost", package: "pipelinehost"),
                .product(name: "BuiltinStages", package: "pipelinehost"),
            ]),
        .executableTarget(
            name: "GrayscaleHost",
            dependencies: [
                "GrayscalePlugin",
                .product(name: "PipelineHostCommandLine", package: "pipelinehost"),
                .product(name: "BuiltinPlugins", package: "pipelinehost"),
            ]),
    ]
)
