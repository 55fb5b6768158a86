import Foundation

/// Real photos with a face at a known place, composed at test time: scikit-image's astronaut
/// (NASA, public domain), her head and shoulders pasted into the bundled sample photo and
/// scikit-image's coffee and cat photos (CC0), which have no face. scripts/setup test unpacks
/// scikit-image's photos into .build/photos.
public enum FacePhotos {
    /// A face's box in pixels.
    public struct Box: Sendable, Equatable, CustomStringConvertible {
        public var x: Int, y: Int, width: Int, height: Int
        public init(x: Int, y: Int, width: Int, height: Int) {
            (self.x, self.y, self.width, self.height) = (x, y, width, height)
        }
        public var description: String { "[\(x) \(y) \(width) \(height)]" }

        /// The share of the two boxes' union they have in common.
        public func overlap(_ other: Box) -> Double {
            let w = min(x + width, other.x + other.width) - max(x, other.x)
            let h = min(y + height, other.y + other.height) - max(y, other.y)
            guard w > 0, h > 0 else { return 0 }
            let common = Double(w * h)
            return common / (Double(width * height + other.width * other.height) - common)
        }
    }

    /// A scene: the encoded photo, its upright size, and where the face is in it, upright.
    public struct Scene: Sendable, CustomStringConvertible {
        public let name: String
        public let bytes: [UInt8]
        public let width: Int, height: Int
        public let face: Box
        public var description: String { name }
    }

    /// The folder scripts/setup test unpacks the photos into.
    public static var folder: String { Fixtures.path(".build/photos") }

    /// The bytes of one of scikit-image's photos: "astronaut.png", "coffee.png", "chelsea.png".
    public static func photo(_ name: String) throws -> [UInt8] {
        let path = folder + "/" + name
        guard FileManager.default.fileExists(atPath: path) else {
            throw ServerError("\(path) is missing: scripts/setup test unpacks scikit-image's photos there")
        }
        return try Fixtures.read(path)
    }

    /// The astronaut's face in astronaut.png (512 x 512), as OpenCV's Haar cascade finds it at
    /// full size, and the head and shoulders around it that scenes paste.
    public static let astronautFace = Box(x: 176, y: 64, width: 99, height: 99)
    static let portrait = Box(x: 96, y: 0, width: 260, height: 300)

    /// The portrait, `scale` times its size, pasted with its top-left corner at (x, y) fractions
    /// of the room left, into `background` filled to `width` x `height`; stored turned by EXIF
    /// `orientation` 6 (a quarter turn) when asked, as a phone writes a portrait.
    public static func scene(
        _ name: String, background: String, width: Int, height: Int, at place: (x: Double, y: Double),
        scale: Double, orientation6: Bool = false
    ) throws -> Scene {
        guard let canvas = Fixtures.resized(try backgroundBytes(background), width: width, height: height),
            let astronaut = Fixtures.decoded(try photo("astronaut.png"))
        else { throw ServerError("scene \(name): a photo does not decode") }
        let cut = crop(astronaut, portrait)
        let side = (Int(Double(portrait.width) * scale), Int(Double(portrait.height) * scale))
        guard let head = Fixtures.resized(Fixtures.encoded(cut, format: .png), width: side.0, height: side.1) else {
            throw ServerError("scene \(name): the portrait does not resize")
        }
        let left = Int(place.x * Double(width - head.width)), top = Int(place.y * Double(height - head.height))
        var samples = canvas.samples
        for row in 0..<head.height {
            let from = row * head.width * 3, to = ((top + row) * width + left) * 3
            samples.replaceSubrange(to..<to + head.width * 3, with: head.samples[from..<from + head.width * 3])
        }
        let upright = Fixtures.Pixels(width: width, height: height, bands: 3, samples: samples)
        let face = Box(
            x: left + Int(Double(astronautFace.x - portrait.x) * scale),
            y: top + Int(Double(astronautFace.y - portrait.y) * scale),
            width: Int(Double(astronautFace.width) * scale), height: Int(Double(astronautFace.height) * scale))
        let bytes =
            orientation6
            ? Fixtures.encoded(turnedBack(upright), orientation: 6) : Fixtures.encoded(upright)
        return Scene(name: name, bytes: bytes, width: width, height: height, face: face)
    }

    private static func backgroundBytes(_ name: String) throws -> [UInt8] {
        name == "sample.jpg" ? Fixtures.sample : try photo(name)
    }

    static func crop(_ pixels: Fixtures.Pixels, _ box: Box) -> Fixtures.Pixels {
        var samples: [UInt8] = []
        samples.reserveCapacity(box.width * box.height * 3)
        for row in box.y..<box.y + box.height {
            let start = (row * pixels.width + box.x) * pixels.bands
            for pixel in 0..<box.width {
                samples += pixels.samples[start + pixel * pixels.bands..<start + pixel * pixels.bands + 3]
            }
        }
        return Fixtures.Pixels(width: box.width, height: box.height, bands: 3, samples: samples)
    }

    /// The pixels a camera stores for an upright picture it tags with orientation 6 (shown
    /// turned a quarter clockwise): the picture turned a quarter anticlockwise.
    static func turnedBack(_ upright: Fixtures.Pixels) -> Fixtures.Pixels {
        let (w, h) = (upright.height, upright.width)
        var samples = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            for x in 0..<w {
                // Turned a quarter clockwise, stored (x, y) is shown at (h - 1 - y, x).
                let (ux, uy) = (h - 1 - y, x)
                let from = (uy * upright.width + ux) * 3, to = (y * w + x) * 3
                samples[to] = upright.samples[from]
                samples[to + 1] = upright.samples[from + 1]
                samples[to + 2] = upright.samples[from + 2]
            }
        }
        return Fixtures.Pixels(width: w, height: h, bands: 3, samples: samples)
    }
}
