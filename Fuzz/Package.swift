// swift-tools-version: 6.1
import PackageDescription

import class Foundation.NSString

// A path dependency's identity is its directory's name, which is whatever the clone is called.
let host = (((#filePath as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent as NSString)
    .lastPathComponent

// libFuzzer targets, kept out of the main package: they have no main() of their own (libFuzzer
// brings it) and only build with -sanitize=fuzzer. scripts/fuzz builds and runs them.
let package = Package(
    name: "pipelinehost-fuzz",
    dependencies: [.package(path: "..")],
    targets: [
        .target(name: "FuzzerDriver"),
        .executableTarget(
            name: "FuzzDecode",
            dependencies: [
                "FuzzerDriver", .product(name: "PipelineHost", package: host),
                .product(name: "PipelineProfiles", package: host),
                .product(name: "BuiltinStages", package: host),
            ]),
        .executableTarget(
            name: "FuzzProfile",
            dependencies: [
                "FuzzerDriver", .product(name: "PipelineHost", package: host),
                .product(name: "PipelineProfiles", package: host),
                .product(name: "BuiltinStages", package: host),
            ]),
    ]
)
