import CVips
import Testing

@testable import VipsPlugin

/// Where `gravity = "faces"` centres a cover crop, and how downsample carries regions through a
/// resize: values only, no image.
@Suite("region framing: the crop's centre and the regions after it")
struct RegionFramingTests {
    // A 3:1 photo cut to a square keeps a third of its width.
    let square = (width: 1.0 / 3, height: 1.0)

    @Test("one face: the crop centres on it and its margin, and slides to stay inside the photo")
    func oneFace() throws {
        let face = ImageRegion(x: 0.80, y: 0.30, width: 0.05, height: 0.15)
        let point = try #require(RegionFraming.focus(of: [face], window: square))
        #expect(abs(point.x - 0.825) < 1e-9 && abs(point.y - 0.375) < 1e-9)
        let window = RegionFraming.window(centredOn: point, size: square)
        #expect(abs(window.x - (0.825 - 1.0 / 6)) < 1e-9 && window.y == 0 && window.height == 1)
        // At the edge, the window slides in rather than leave the photo.
        let edge = RegionFraming.window(centredOn: (0.99, 0.5), size: square)
        #expect(abs(edge.x + edge.width - 1) < 1e-9)
    }

    @Test("faces that fit together are all kept; faces too far apart: the largest wins")
    func severalFaces() throws {
        let left = ImageRegion(x: 0.05, y: 0.4, width: 0.04, height: 0.12)
        let near = ImageRegion(x: 0.15, y: 0.4, width: 0.04, height: 0.12)
        let together = try #require(RegionFraming.focus(of: [left, near], window: square))
        #expect(abs(together.x - 0.12) < 1e-9)
        let far = ImageRegion(x: 0.85, y: 0.3, width: 0.08, height: 0.24)
        let apart = try #require(RegionFraming.focus(of: [left, far], window: square))
        #expect(apart.x > 0.7, "the larger face at 0.89 outweighs the smaller at 0.07: \(apart.x)")
        #expect(RegionFraming.focus(of: [], window: square) == nil)
    }

    @Test("downsample carries regions: unchanged by a resize, moved by a crop, dropped outside it")
    func mapping() throws {
        let geometry = ResizeGeometry(source: (3000, 1000), box: (300, 300), enlarge: false)
        #expect(abs(geometry.coverWindow.width - 1.0 / 3) < 1e-9 && geometry.coverWindow.height == 1)
        let face = ImageRegion(x: 0.80, y: 0.30, width: 0.05, height: 0.15)
        let other = ImageRegion(x: 0.10, y: 0.30, width: 0.05, height: 0.15)
        let none = ph_crop(mode: PH_CROP_NONE, x: 0.5, y: 0.5)
        #expect(geometry.mapping([face], crop: none, padding: nil) == [face])
        let at = ph_crop(mode: PH_CROP_AT, x: 0.825, y: 0.5)
        let mapped = try #require(geometry.mapping([face, other], crop: at, padding: nil))
        try #require(mapped.count == 1, "the face outside the window is dropped: \(mapped)")
        #expect(abs(mapped[0].x - 0.425) < 1e-9 && abs(mapped[0].width - 0.15) < 1e-9)
        // A smartcrop's window is libvips' own: the regions are lost, and blur_faces refuses.
        let attention = ph_crop(mode: PH_CROP_ATTENTION, x: 0.5, y: 0.5)
        #expect(geometry.mapping([face], crop: attention, padding: nil) == nil)
        #expect(geometry.mapping([], crop: attention, padding: nil) == [])
        // Contain: the photo sits in the top third of the square, left to right.
        let padded = try #require(geometry.mapping([face], crop: none, padding: ([0, 0, 0, 1], 0.5, 0)))
        #expect(abs(padded[0].x - 0.8) < 1e-9 && abs(padded[0].y - 0.1) < 1e-9 && abs(padded[0].height - 0.05) < 1e-9)
    }
}
