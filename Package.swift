// swift-tools-version: 6.2
import PackageDescription

// Swift 6 language mode (strict concurrency) is the default for tools-version 6.x; warnings are
// treated as errors in scripts/test, so the build stays clean.
let package = Package(
    name: "pipelinehost",
    products: [
        .library(name: "PipelineHost", targets: ["PipelineHost"]),
        .library(name: "PipelineProfiles", targets: ["PipelineProfiles"]),
        .library(name: "PipelineTesting", targets: ["PipelineTesting"]),
        .library(
            name: "BuiltinStages", targets: ["FetchPlugin", "PipelineHostTransfer", "KeyNormalizePlugin", "VipsPlugin"]),
        .library(name: "SubsonicAuthPlugin", targets: ["SubsonicAuthPlugin"]),
        .library(name: "CirclePlugin", targets: ["CirclePlugin"]),
        // The command line as a library, for a package's own `pipelinehost` with its own plugins
        // (examples/ExternalPlugin); and the libvips headers with the host's wrappers, for a
        // plugin's own C target.
        .library(name: "PipelineHostCommandLine", targets: ["PipelineHostCommandLine"]),
        .library(name: "CVips", targets: ["CVips"]),
        // The stock plugin list (`.builtin`), for a package's own `pipelinehost`.
        .library(name: "BuiltinPlugins", targets: ["BuiltinPlugins"]),
        // The HTTP service and the Redis tier, for an app that embeds either.
        .library(name: "PipelineHostServe", targets: ["PipelineHostServe"]),
        .library(name: "PipelineHostRedis", targets: ["PipelineHostRedis"]),
        .library(name: "PipelineHostObjectStore", targets: ["PipelineHostObjectStore"]),
        .executable(name: "pipelinehost", targets: ["PipelineHostExecutable"]),
    ],
    // The OTLP/HTTP trace exporter (swift-otel) is the heaviest build of all: its TLS, HTTP client
    // and protobuf types. Only the stock executable uses it, so it is a trait: scripts/test's
    // release build enables it (`--traits OTLPExporter`), and scripts/run does when an OTLP
    // endpoint is set; the debug, TSan and embedding builds leave it out. Without it, a set
    // OTEL_* endpoint gets a warning that says how to build it.
    traits: [
        .trait(name: "OTLPExporter", description: "Export traces over OTLP/HTTP with swift-otel."),
        // The face detector (FacesPlugin) links OpenCV: 14 more libraries that every process
        // would load at start-up. scripts/test's release build enables it; FACES=1 scripts/run does.
        .trait(name: "Faces", description: "The faces and blur_faces stages, with OpenCV's cascades."),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        // serve: HTTP, start-up and graceful shutdown, and the Prometheus text format. Hummingbird's
        // swift-configuration trait is left off: flags and environment are read by the CLI.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0", traits: ["FullFoundation"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        // `swift package generate-documentation` for the DocC catalogs (scripts/docs).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // Spans in the library targets (a light API); the executable's exporter (trait OTLPExporter).
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.0"),
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        // System libraries, found through pkg-config (Debian: liblua5.4-dev, libvips-dev,
        // libcurl4-openssl-dev). scripts/setup installs them.
        .systemLibrary(
            name: "LuaSystem", path: "Sources/System/LuaSystem", pkgConfig: "lua5.4",
            providers: [.apt(["liblua5.4-dev"])]),
        .systemLibrary(
            name: "VipsSystem", path: "Sources/System/VipsSystem", pkgConfig: "vips",
            providers: [.apt(["libvips-dev"])]),
        .systemLibrary(
            name: "CurlSystem", path: "Sources/System/CurlSystem", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(
            name: "HiredisSystem", path: "Sources/System/HiredisSystem", pkgConfig: "hiredis",
            providers: [.apt(["libhiredis-dev"])]),

        // Small C shims: fixed-arity wrappers for variadic calls and macros, and the callbacks
        // (Lua hooks and allocator, curl write/progress) that must stay on the C side.
        .target(name: "CLua", dependencies: ["LuaSystem"]),
        // libjpeg is named so that the executable exports ph_jpeg_memory.c's definitions of its
        // large-block allocator, which libjpeg then calls instead of its own. lcms2 (libvips'
        // own colour library) builds the colour transforms ph_colour_transforms.c keeps. libavif
        // (dav1d and libyuv) reads AVIF for ph_avif_load.c; libimagequant (libvips' own GIF
        // quantizer) and giflib write GIF for ph_gif_save.c, quantizing frames side by side.
        // GModule (libvips' own) opens libvips' modules for ph_vips_modules.c.
        .target(
            name: "CVips", dependencies: ["VipsSystem"],
            linkerSettings: [
                .linkedLibrary("jpeg"), .linkedLibrary("lcms2"), .linkedLibrary("avif"), .linkedLibrary("imagequant"),
                .linkedLibrary("gif"), .linkedLibrary("gmodule-2.0"),
            ]),
        .target(name: "CCurl", dependencies: ["CurlSystem"]),
        .target(name: "CRedis", dependencies: ["HiredisSystem"]),

        // BlurHash and ThumbHash encoders over a small RGBA image: pure Swift, no dependency. The
        // info and placeholder stages (VipsPlugin) use them.
        .target(name: "PlaceholderHashes"),
        // The host: stages, registry, pipeline, caches. No imaging, network or Lua code of its
        // own (docs/ARCHITECTURE.md; scripts/check-imports holds every target to its list).
        .target(
            name: "PipelineHost",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]),

        // Lua profile files: the sandbox and the loader that turns a file into a ProfileSet.
        .target(name: "PipelineProfiles", dependencies: ["PipelineHost", "CLua"]),

        // Fake fetch, decode and encode stages over an in-memory origin, for tests of the
        // pipeline's logic (and of an embedder's) without libcurl or libvips.
        .target(name: "PipelineTesting", dependencies: ["PipelineHost"]),

        // Built-in stages. They use the same plugin API as third-party plugins.
        .target(
            name: "FetchPlugin", dependencies: ["PipelineHost", "PipelineHostTransfer", "CCurl"],
            path: "Sources/Plugins/Fetch"),
        .target(name: "KeyNormalizePlugin", dependencies: ["PipelineHost"], path: "Sources/Plugins/KeyNormalize"),
        .target(
            name: "VipsPlugin", dependencies: ["PipelineHost", "CVips", "PlaceholderHashes"],
            path: "Sources/Plugins/Vips"),

        // Example plugins, built exactly like a third party's (see docs/PLUGINS.md).
        .target(
            name: "SubsonicAuthPlugin",
            dependencies: [
                "PipelineHost", .product(name: "Crypto", package: "swift-crypto"),
            ], path: "Sources/Plugins/SubsonicAuth"),
        // Its variadic libvips call is wrapped in a C target of its own, as docs/PLUGINS.md tells
        // a third party to do; CVips brings the libvips headers.
        .target(name: "CCircle", dependencies: ["CVips"], path: "Sources/Plugins/CCircle"),
        .target(
            name: "CirclePlugin", dependencies: ["PipelineHost", "CCircle", "VipsPlugin"],
            path: "Sources/Plugins/Circle"),
        // Faces, behind the trait Faces: OpenCV (C++) in a target of its own that exposes C
        // functions, so no Swift target needs C++ interop. Debian: libopencv-objdetect-dev and
        // opencv-data (scripts/setup faces); it has no pkg-config file, so the headers' folder
        // is named here.
        .target(
            name: "CFaces", dependencies: ["CVips"], path: "Sources/Plugins/CFaces",
            cxxSettings: [.unsafeFlags(["-I/usr/include/opencv4"])],
            linkerSettings: [
                .linkedLibrary("opencv_objdetect"), .linkedLibrary("opencv_imgproc"), .linkedLibrary("opencv_core"),
            ]),
        .target(
            name: "FacesPlugin", dependencies: ["PipelineHost", "CFaces", "VipsPlugin"],
            path: "Sources/Plugins/Faces"),
        // new-plugin: targets (scripts/new-plugin adds plugin targets above this line)

        // The stock plugin list, `.builtin`: the command line itself names no plugin.
        .target(
            name: "BuiltinPlugins",
            dependencies: [
                "PipelineHost", "FetchPlugin", "KeyNormalizePlugin", "VipsPlugin", "SubsonicAuthPlugin", "CirclePlugin",
            ]),

        // The shared cache tier on Redis (hiredis through CRedis): one tier for many nodes.
        .target(
            name: "PipelineHostRedis",
            dependencies: [
                "PipelineHost", "CRedis",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]),

        // libcurl transfers (limits, the address guard, cache headers) and the S3 client over
        // them (libcurl's Signature V4): what the fetch plugin and the object-store tier share.
        .target(name: "PipelineHostTransfer", dependencies: ["PipelineHost", "CCurl"]),

        // The object-store tier on S3 or a compatible store: durable, after Redis. It reaches the
        // bucket through `S3Client` (PipelineHostTransfer).
        .target(
            name: "PipelineHostObjectStore",
            dependencies: [
                "PipelineHost", "PipelineHostTransfer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ]),

        // The long-lived HTTP service (`pipelinehost serve`): signed imgproxy-style URLs onto one
        // shared Pipeline, backpressure, reload and drain (docs/SERVE.md).
        .target(
            name: "PipelineHostServe",
            dependencies: [
                "PipelineHost",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]),

        // Every subcommand, with the plugins a caller gives (`PipelineHostCommand.main(plugins:)`).
        // It names no plugin as a stage: it builds the Redis and object-store tiers (the latter reaches S3
        // through PipelineHostTransfer's client) and hands them in, and asks plugins
        // through their hooks (`canEncode`).
        .target(
            name: "PipelineHostCommandLine",
            dependencies: [
                "PipelineHost", "PipelineProfiles", "PipelineHostServe", "PipelineHostRedis", "PipelineHostObjectStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        // The stock executable: the command line with the built-in plugins.
        .executableTarget(
            name: "PipelineHostExecutable",
            dependencies: [
                "PipelineHost", "PipelineHostCommandLine", "BuiltinPlugins",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "OTel", package: "swift-otel", condition: .when(traits: ["OTLPExporter"])),
                .target(name: "FacesPlugin", condition: .when(traits: ["Faces"])),
                // new-plugin: executable dependencies
            ]),

        // How an app embeds the library: prefetch, cancellation, the last good background
        // (docs/EMBEDDING.md). scripts/test runs it.
        .executableTarget(
            name: "pipelinehost-cover-grid-example",
            dependencies: [
                "PipelineHost", "PipelineProfiles", "FetchPlugin", "KeyNormalizePlugin", "VipsPlugin",
            ], path: "Sources/Examples/CoverGrid"),

        // Tests: a target per area, plus TestSupport (loopback HTTP server, image fixtures).
        .target(
            name: "TestSupport",
            dependencies: [
                "CVips", "PipelineHost", "PipelineProfiles", "PipelineTesting", "FetchPlugin",
                "KeyNormalizePlugin", "VipsPlugin", "SubsonicAuthPlugin", "CirclePlugin",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/TestSupport", exclude: ["s3tool.py", "otlp_receiver.py"]),
        // The soak run (scripts/soak): thousands of mixed requests through one Pipeline.
        .executableTarget(
            name: "pipelinehost-soak",
            dependencies: [
                "TestSupport", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ], path: "Tests/Soak"),
        // Runs a command and reports its peak memory (MeasuredProcess), in C: a test needs no python.
        .executableTarget(name: "pipelinehost-peak-memory", path: "Tests/PeakMemory"),
        .testTarget(name: "ProfileTests", dependencies: ["TestSupport"]),
        .testTarget(name: "FetchTests", dependencies: ["TestSupport", "PipelineHostTransfer"]),
        .testTarget(name: "NormalizeTests", dependencies: ["TestSupport"]),
        .testTarget(name: "VipsStageTests", dependencies: ["CVips", "TestSupport"]),
        .testTarget(name: "PipelineTests", dependencies: ["TestSupport"]),
        .testTarget(name: "PlaceholderTests", dependencies: ["PlaceholderHashes", "TestSupport"]),
        // The pipeline's rules with fake stages only: this target links neither libvips nor curl.
        .testTarget(
            name: "PipelineLogicTests", dependencies: ["PipelineTesting", "PipelineProfiles", "PipelineHostRedis"]),
        .testTarget(name: "CLITests", dependencies: ["TestSupport", "PipelineHostCommandLine"]),
        .testTarget(name: "CacheTests", dependencies: ["TestSupport", "PipelineHostTransfer"]),
        .testTarget(name: "HardeningTests", dependencies: ["TestSupport", "PipelineHostTransfer"]),
        .testTarget(
            name: "MetricsTests",
            dependencies: ["TestSupport", .product(name: "MetricsTestKit", package: "swift-metrics")]),
        .testTarget(name: "SubsonicAuthPluginTests", dependencies: ["TestSupport", "SubsonicAuthPlugin"]),
        .testTarget(name: "CirclePluginTests", dependencies: ["TestSupport", "CirclePlugin"]),
        .testTarget(name: "SharedCacheTests", dependencies: ["TestSupport", "PipelineHostRedis"]),
        .testTarget(
            name: "ObjectStorageTests",
            dependencies: ["TestSupport", "PipelineHostTransfer", "PipelineHostObjectStore"]),
        .testTarget(
            name: "ServeTests",
            dependencies: [
                "TestSupport", "PipelineHostServe", "PipelineTesting", "PipelineProfiles",
                // LiveServe's client: NIO's HTTP/1.1 codec (HummingbirdTesting's brought
                // AsyncHTTPClient, HTTP/2 and a second BoringSSL into the test builds).
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]),
        // OpenTelemetry traces of serve and run, exported by the release binary to a real receiver.
        .testTarget(name: "TracingTests", dependencies: ["TestSupport"]),
        .testTarget(name: "ContainerTests", dependencies: ["TestSupport"]),
        .testTarget(name: "FacesPluginTests", dependencies: ["TestSupport", "FacesPlugin"]),
        // new-plugin: test targets
    ]
)
