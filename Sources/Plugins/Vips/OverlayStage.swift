import CVips
import Foundation
import PipelineHost

/// A watermark: an image drawn over every result, from a file next to the profile or from a
/// URL. It is loaded once and shared by every request: a file when the profile loads (its
/// digest is part of the stage's identity, so replacing the file makes new variants), a URL by
/// the first request that needs it, through the profile's own fetch stage and so by the same
/// rules as the sources (a failure is not kept: the next request tries again).
struct OverlayStage: Stage {
    struct Keys: ParameterList {
        let image = OptionalParameter<String>(
            "image", .string,
            doc:
                "the overlay: a file relative to the profile file, or an http(s) URL (change the URL when the image changes)"
        )
        let gravity = Parameter<Gravity>(
            "gravity", default: .southEast,
            doc: "where it goes")
        let margin = Parameter<Int>(
            "margin", .integer(0...4096), default: 0,
            doc: "pixels kept free at the edges")
        let opacity = Parameter<Double>(
            "opacity", .number(0...1), default: 1,
            doc: "0 invisible, 1 as drawn")
        let scale = OptionalParameter<Double>(
            "scale", .number(0.01...1),
            doc: "its width as a fraction of the image's (its own size when left out)")
    }

    static let definition = StageDefinition(
        name: "overlay",
        summary: "Draw an image (a watermark) over the result: a file relative to the profile, or a URL fetched by the "
            + "profile's fetch rules; placed by gravity inside a margin, at an opacity, scaled to a fraction of the width.",
        input: .image, output: .image,
        parameters: Keys.specs,
        make: { try OverlayStage($0) })

    /// An overlay larger than this is refused: it is decoded whole and kept in memory.
    static let maxPixels = 25_000_000

    let file: VipsImageHandle?
    let url: String?
    /// The URL's image once a request has loaded it, or the load in progress.
    let remote = Locked<Task<VipsImageHandle, any Error>?>(nil)
    let x: Double
    let y: Double
    let margin: Int32
    let opacity: Double
    let scale: Double
    let identityDetail: String?

    /// The largest overlay file read when the profile loads.
    static let maxFileBytes = 20 << 20

    init(_ p: StageParameters) throws(ParameterError) {
        guard let written = p[\Keys.image] else {
            throw ParameterError(
                "overlay needs image, a file relative to the profile or a URL, like overlay { image = \"logo.png\" }")
        }
        if written.lowercased().hasPrefix("http://") || written.lowercased().hasPrefix("https://") {
            (file, url, identityDetail) = (nil, written, nil)
        } else {
            let base = p.profileFile.map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
            let path = written.hasPrefix("/") ? written : (base?.appendingPathComponent(written).path ?? written)
            let data: [UInt8]
            do {
                data = try BoundedFile.read(path, maxBytes: Self.maxFileBytes, allowEmpty: false)
            } catch {
                throw ParameterError("overlay: image \"\(written)\" (looked at \(path)) \(error)")
            }
            do throws(PipelineError) {
                file = try Self.decode(ImageBytes(copying: data))
            } catch {
                throw ParameterError("overlay: \"\(written)\" \(error.reason)")
            }
            (url, identityDetail) = (nil, StageIdentity.digest(of: data))
        }
        (x, y) = p[\Keys.gravity].point
        margin = Int32(p[\Keys.margin])
        opacity = p[\Keys.opacity]
        scale = p[\Keys.scale] ?? 0
    }

    func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        let overlay = try await overlayImage(in: context)
        let (x, y, margin, opacity, scale) = (x, y, margin, opacity, scale)
        return try await input.applyingVips("overlay", in: context) { image, output in
            ph_vips_overlay(image, overlay.pointer, scale, opacity, x, y, margin, &output)
        }
    }

    /// The file's image, or the URL's: one load for every request, kept once it succeeds.
    private func overlayImage(in context: StageContext) async throws -> VipsImageHandle {
        if let file { return file }
        let url = url!
        let load = remote.withLock { current in
            if let current { return current }
            let started = Task { try await Self.fetch(url, in: context) }
            current = started
            return started
        }
        do {
            return try await load.value
        } catch {
            remote.withLock { if $0 == load { $0 = nil } }
            throw error
        }
    }

    private static func fetch(_ url: String, in context: StageContext) async throws -> VipsImageHandle {
        let shown = Redactor.redact(url)
        guard let fetcher = context.fetcher else {
            throw PipelineError(
                .stageFailed, "overlay: image \(shown) is a URL, and the profile has no fetch stage to fetch it by")
        }
        let fetched: StageValue
        do {
            fetched = try await fetcher.run(.source(Source(location: url)), in: context)
        } catch let error as PipelineError {
            throw PipelineError(error.kind, "overlay image \(shown): \(error.reason)", details: error.details)
        }
        guard case .encoded(let encoded) = fetched else {
            throw PipelineError(.stageFailed, "overlay image \(shown): the fetch stage gave no bytes")
        }
        if case .text(let mediaType) = Sniffer.sniff(encoded.bytes.prefix(1024)) {
            throw PipelineError(.notAnImage, "overlay image \(shown): not an image (\(mediaType))")
        }
        return try await context.runVips { () throws(PipelineError) -> VipsImageHandle in
            do throws(PipelineError) {
                return try Self.decode(encoded.bytes)
            } catch {
                throw PipelineError(error.kind, "overlay image \(shown): \(error.reason)")
            }
        }
    }

    /// Decodes the whole overlay into memory, refusing one over `maxPixels`.
    private static func decode(_ bytes: ImageBytes) throws(PipelineError) -> VipsImageHandle {
        try VipsRuntime.start()
        let errors = VipsErrorMark()
        guard let opened = ph_vips_open(bytes.baseAddress, bytes.count, 1) else {
            throw PipelineError(.decodeFailed, "is not an image libvips reads: \(errors.messages)")
        }
        let handle = VipsImageHandle(opened, keeping: bytes)
        let size = handle.size
        guard size.width * size.height <= maxPixels else {
            throw PipelineError(
                .pixelLimit, "is \(size), over the overlay limit of \(maxPixels / 1_000_000) megapixels")
        }
        return try handle.derive("overlay load") { ph_vips_copy_memory($0, &$1) }
    }
}
