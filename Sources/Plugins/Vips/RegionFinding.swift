import CVips
import PipelineHost
import PlaceholderHashes

/// The small copy a finder looks at: upright, 8-bit RGBA, rows of `width * 4` bytes, in sRGB
/// but for a JPEG's embedded profile, which is not applied (a detector needs no exact shade).
public struct FinderPixels: Sendable {
    /// Pixels across.
    public let width: Int
    /// Pixels down.
    public let height: Int
    /// `width * height * 4` bytes: R, G, B, A per pixel.
    public let rgba: [UInt8]

    /// The size of the copy, to turn the finder's pixel boxes into regions.
    public var size: PixelSize { PixelSize(width: width, height: height) }
}

extension StageValue {
    /// For plugins that find parts of an image (the faces plugin): hands `find` a copy of about
    /// `area` pixels, shrunk on load, and gives the same image, still undecoded, carrying what
    /// it found. downsample's `gravity = "faces"` crops by the regions, info reports them, and
    /// the pipeline shares and keeps this step's result as it does every step's.
    ///
    /// The copy is as many pixels whatever the shape, so a face in a panorama is as many
    /// pixels as in a square photo.
    ///
    /// `finder` names the finder and its settings ("faces detail=400"): what it found in a
    /// source's bytes is kept under it, so a later request for the same bytes does not look again.
    /// `find` gives nil when it could not look (its library failed): the image then goes on
    /// with no region, and nothing is kept, so the next request looks again.
    public func findingRegions(
        _ stage: String, finder: String, area: Int, in context: StageContext,
        _ find: @escaping @Sendable (FinderPixels) throws(PipelineError) -> [ImageRegion]?
    ) async throws -> StageValue {
        let image = try vipsImage(for: stage)
        let stored = image.size
        let aspect = Double(max(stored.width, stored.height)) / Double(max(1, min(stored.width, stored.height)))
        let side = Int((Double(area).squareRoot() * min(4, aspect.squareRoot())).rounded())
        return try await context.runVips { () throws(PipelineError) -> StageValue in
            var found = image
            // Hashing a 5 MB file takes milliseconds: off the cooperative pool, as decoding is.
            let memo = image.undecodedBytes.map { RegionMemo.key(finder: finder, bytes: $0) }
            if let memo, let regions = RegionMemo[memo] {
                found.regions = regions
                return .image(found)
            }
            let small: RGBAImage
            // A scale up to 5% short of the copy will do: a 2560 px photo's 1/4 is 640 px, 8
            // short of a 648 px copy, and its 1/2 has four times the pixels to decode and resize
            // (here and in downsample, which reuses the draft).
            if let draft = try image.jpegDraft(fitting: side * 19 / 20) {
                // Kept for downsample, which would decode the file at this scale again.
                found.draft = draft
                // Its profile is not applied: lcms on the copy cost 5 ms of a 60 ms crop.
                let uncorrected = try draft.handle.derive("copy") { ph_vips_device_colours($0, &$1) }
                small = try image.rgba(of: try image.shrunk(uncorrected, fitting: side))
            } else {
                small = try image.smallRGBA(fitting: side)
            }
            let regions = try find(FinderPixels(width: small.width, height: small.height, rgba: small.pixels))
            if let memo, let regions { RegionMemo.remember(regions, for: memo) }
            found.regions = regions ?? []
            return .image(found)
        }
    }

    /// The regions an earlier stage found, in fractions of this image: nil when no stage
    /// looked, or a stage since then moved the pixels without taking them along.
    public func regions(for stage: String) throws(PipelineError) -> [ImageRegion]? {
        try vipsImage(for: stage).regions
    }
}
