import PipelineHost

/// Stand-ins for the fetch, decode and encode stages, registered under those names, so a test
/// of the pipeline's logic loads ordinary profiles (`fetch {}, decode {}, encode {}`, with
/// `cache` and key stages as usual) and runs them in milliseconds with no libcurl or libvips.
///
/// `fetch` reads the source's path from a `FakeOrigin`; `decode` makes an image whose width is
/// the byte count; `encode` turns it back into bytes that name that size. `decode { gate = "g" }`
/// waits in its CPU slot until `origin.open(gate: "g")`, to fill the CPU queue on purpose: the
/// gates belong to the test's origin, so two tests never share one.
public enum FakeStages {

    /// A registry with the fake stages reading `origin`, the cache stage, and `extra` plugins.
    public static func registry(origin: FakeOrigin, extra: [any PipelinePlugin.Type] = []) throws -> StageRegistry {
        var registry = try StageRegistry(plugins: [CachePlugin.self] + extra)
        try registry.register(
            StageDefinition(
                name: "fetch", summary: "Read the source's path from a FakeOrigin.", input: .source, output: .encoded,
                parameters: [], make: { _ in FakeFetch(origin: origin) }))
        try registry.register(
            StageDefinition(
                name: "decode", summary: "An image as wide as the bytes are long.", input: .encoded, output: .image,
                parameters: [ParameterSpec("gate", .string, default: .string(""), doc: "wait for origin.open(gate:)")],
                make: { FakeDecode(origin: origin, gate: $0.string("gate") ?? "") }))
        try registry.register(
            StageDefinition(
                name: "encode", summary: "Bytes that name the image's size.", input: .image, output: .encoded,
                parameters: [], make: { _ in FakeEncode() }))
        return registry
    }

    struct FakeFetch: Stage {
        let origin: FakeOrigin

        func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
            guard case .source(let source) = input else {
                throw PipelineError(.stageFailed, "fetch: expected a source")
            }
            let location = SourceLocation(source.location)
            let path = location.authority.map { location.resource[$0.endIndex...] } ?? location.resource
            let (bytes, maxAge) = try await origin.fetch(path.isEmpty ? "/" : String(path))
            return .encoded(
                EncodedImage(
                    bytes: ImageBytes(copying: bytes), format: "fake",
                    cacheHints: maxAge.map { CacheHints(maxAge: $0) }))
        }
    }

    struct FakeImage: PipelineImage {
        let size: PixelSize
        var sourceSize: PixelSize { size }
    }

    struct FakeDecode: Stage {
        let origin: FakeOrigin
        let gate: String

        func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
            guard case .encoded(let encoded) = input else {
                throw PipelineError(.stageFailed, "decode: expected bytes")
            }
            if !gate.isEmpty { try await origin.waitForGate(gate) }
            return .image(FakeImage(size: PixelSize(width: encoded.bytes.count, height: 1)))
        }
    }

    struct FakeEncode: Stage {
        func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
            guard case .image(let image) = input else { throw PipelineError(.stageFailed, "encode: expected an image") }
            let bytes = Array("\(image.size)".utf8)
            return .encoded(EncodedImage(bytes: ImageBytes(copying: bytes), format: "fake", size: image.size))
        }
    }
}
