// swift-tools-version: 6.1
import PackageDescription

import class Foundation.NSString

// A path dependency's identity is its directory's name, which is whatever the clone is called.
let host = (((#filePath as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent as NSString)
    .lastPathComponent

// In-process microbenchmarks (ordo-one/benchmark), kept out of the main package so that
// `swift build` and CI do not build the benchmark harness. scripts/bench runs them.
let package = Package(
    name: "pipelinehost-benchmarks",
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "CacheHits",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "PipelineHost", package: host),
                .product(name: "PipelineProfiles", package: host),
                .product(name: "BuiltinStages", package: host),
            ],
            path: "Benchmarks/CacheHits",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)
