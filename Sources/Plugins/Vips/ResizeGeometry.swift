import CVips
import PipelineHost

/// Where downsample puts the source's pixels, in fractions: what it takes to carry regions (a
/// faces stage's) through the resize, and the window a cover crop keeps.
struct ResizeGeometry {
    /// The source's upright size.
    let source: (width: Double, height: Double)
    /// The box, in pixels (one side may be unbounded for fit inside).
    let box: (width: Double, height: Double)
    let enlarge: Bool

    init(_ image: VipsPipelineImage, box: (Int32, Int32), enlarge: Bool) {
        let upright = image.undecodedBytes != nil ? ImageFacts(handle: image.handle).uprightSize : image.size
        source = (Double(max(1, upright.width)), Double(max(1, upright.height)))
        self.box = (Double(box.0), Double(box.1))
        self.enlarge = enlarge
    }

    init(source: (width: Double, height: Double), box: (width: Double, height: Double), enlarge: Bool) {
        self.source = source
        self.box = box
        self.enlarge = enlarge
    }

    private func limited(_ scale: Double) -> Double { enlarge ? scale : min(1, scale) }

    /// The part of the source a cover crop keeps, in fractions of each side.
    var coverWindow: (width: Double, height: Double) {
        let scale = limited(max(box.width / source.width, box.height / source.height))
        return (min(1, box.width / (scale * source.width)), min(1, box.height / (scale * source.height)))
    }

    /// The regions as they are in the result: the same fractions for a resize, those seen
    /// through the window for a crop, moved and shrunk onto the canvas for contain. Nil for a
    /// smartcrop, whose window libvips keeps to itself.
    func mapping(_ regions: [ImageRegion], crop: ph_crop, padding: (rgba: [Double], x: Double, y: Double)?)
        -> [ImageRegion]?
    {
        guard !regions.isEmpty else { return [] }
        switch crop.mode {
        case PH_CROP_NONE:
            guard let padding else { return regions }
            let scale = limited(min(box.width / source.width, box.height / source.height))
            let (width, height) = (scale * source.width / box.width, scale * source.height / box.height)
            let (left, top) = ((1 - width) * padding.x, (1 - height) * padding.y)
            return regions.map {
                ImageRegion(
                    x: left + $0.x * width, y: top + $0.y * height, width: $0.width * width,
                    height: $0.height * height)
            }
        case PH_CROP_AT, PH_CROP_CENTRE:
            let point = crop.mode == PH_CROP_AT ? (crop.x, crop.y) : (0.5, 0.5)
            let window = RegionFraming.window(centredOn: point, size: coverWindow)
            return regions.compactMap { $0.seen(through: window) }
        default:
            return nil
        }
    }
}
