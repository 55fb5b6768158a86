import PipelineHost

/// A part of an image that a plugin's stage found (a face), in fractions of the image's
/// width and height, upright: the same box at any size of the image.
public struct ImageRegion: Sendable, Equatable, Hashable {
    /// The left edge, as a fraction of the width.
    public var x: Double
    /// The top edge, as a fraction of the height.
    public var y: Double
    /// The width, as a fraction of the image's.
    public var width: Double
    /// The height, as a fraction of the image's.
    public var height: Double

    /// A region from its fractions.
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// A box in pixels of an image `size`, as a region of it.
    public init(pixels x: Int, _ y: Int, _ width: Int, _ height: Int, of size: PixelSize) {
        let (w, h) = (Double(max(1, size.width)), Double(max(1, size.height)))
        self.init(x: Double(x) / w, y: Double(y) / h, width: Double(width) / w, height: Double(height) / h)
    }

    var centre: (x: Double, y: Double) { (x + width / 2, y + height / 2) }

    /// The region with `margin` of its own size added on every side (0.5: twice as wide).
    public func grown(by margin: Double) -> ImageRegion {
        ImageRegion(
            x: x - width * margin, y: y - height * margin, width: width * (1 + 2 * margin),
            height: height * (1 + 2 * margin))
    }

    /// The region in pixels of an image `size`, rounded outwards.
    public func pixels(of size: PixelSize) -> (x: Int, y: Int, width: Int, height: Int) {
        let (w, h) = (Double(size.width), Double(size.height))
        let left = max(0, Int((x * w).rounded(.down))), top = max(0, Int((y * h).rounded(.down)))
        let right = min(size.width, Int(((x + width) * w).rounded(.up)))
        let bottom = min(size.height, Int(((y + height) * h).rounded(.up)))
        return (left, top, max(0, right - left), max(0, bottom - top))
    }

    /// The part of this region inside `window` (fractions too), in fractions of the window;
    /// nil when none of it is.
    func seen(through window: ImageRegion) -> ImageRegion? {
        let left = max(x, window.x), top = max(y, window.y)
        let right = min(x + width, window.x + window.width), bottom = min(y + height, window.y + window.height)
        guard right > left, bottom > top, window.width > 0, window.height > 0 else { return nil }
        return ImageRegion(
            x: (left - window.x) / window.width, y: (top - window.y) / window.height,
            width: (right - left) / window.width, height: (bottom - top) / window.height)
    }
}

/// Where a cover crop keeps regions: the point it centres on, given the part of the image the
/// crop keeps (`window`, fractions of the width and height).
enum RegionFraming {
    /// A face's box is the face itself; a photographer keeps the head and some room around it.
    static let margin = 0.5

    /// All regions with their margins when they fit the window together; else the regions
    /// weighted by their areas, so the largest faces win. Nil without regions.
    static func focus(of regions: [ImageRegion], window: (width: Double, height: Double)) -> (x: Double, y: Double)? {
        guard !regions.isEmpty else { return nil }
        let framed = regions.map { $0.grown(by: margin) }
        let left = framed.map(\.x).min()!, top = framed.map(\.y).min()!
        let right = framed.map { $0.x + $0.width }.max()!, bottom = framed.map { $0.y + $0.height }.max()!
        if right - left <= window.width, bottom - top <= window.height {
            return ((left + right) / 2, (top + bottom) / 2)
        }
        let weights = regions.map { $0.width * $0.height }
        let total = weights.reduce(0, +)
        guard total > 0 else { return regions[0].centre }
        let x = zip(regions, weights).map { $0.centre.x * $1 }.reduce(0, +) / total
        let y = zip(regions, weights).map { $0.centre.y * $1 }.reduce(0, +) / total
        return (x, y)
    }

    /// The window a crop centred as near as it can be on `point` keeps, as libvips' crop at a
    /// point does (ph_vips.c, crop_at): the window slides to stay inside the image.
    static func window(centredOn point: (x: Double, y: Double), size: (width: Double, height: Double)) -> ImageRegion {
        let width = min(1, size.width), height = min(1, size.height)
        return ImageRegion(
            x: min(max(0, point.x - width / 2), 1 - width), y: min(max(0, point.y - height / 2), 1 - height),
            width: width, height: height)
    }
}
