import PipelineHost

/// Where a crop keeps the image, or where a canvas puts it: the compass points, each a point in
/// fractions of the width and height (north is the middle of the top edge).
enum Gravity: String, ParameterChoice {
    case centre, north, south, east, west
    case northEast = "north_east"
    case northWest = "north_west"
    case southEast = "south_east"
    case southWest = "south_west"

    /// The point, as fractions of the width and height.
    var point: (x: Double, y: Double) {
        switch self {
        case .centre: (0.5, 0.5)
        case .north: (0.5, 0)
        case .south: (0.5, 1)
        case .east: (1, 0.5)
        case .west: (0, 0.5)
        case .northEast: (1, 0)
        case .northWest: (0, 0)
        case .southEast: (1, 1)
        case .southWest: (0, 1)
        }
    }
}

/// Where `fit = "cover"` crops: a compass point, libvips' smartcrop by what draws the eye
/// (attention) or by the busiest part (entropy), or around the faces a `faces` stage found
/// (attention where it found none).
enum CropGravity: ParameterChoice, Equatable {
    case compass(Gravity)
    case attention
    case entropy
    case faces

    static var allCases: [CropGravity] { Gravity.allCases.map(CropGravity.compass) + [.attention, .entropy, .faces] }

    /// Whether the crop is found in the picture rather than at a fixed point.
    var isSmart: Bool { self == .attention || self == .entropy || self == .faces }

    init?(rawValue: String) {
        switch rawValue {
        case "attention": self = .attention
        case "entropy": self = .entropy
        case "faces": self = .faces
        default:
            guard let point = Gravity(rawValue: rawValue) else { return nil }
            self = .compass(point)
        }
    }

    var rawValue: String {
        switch self {
        case .compass(let point): point.rawValue
        case .attention: "attention"
        case .entropy: "entropy"
        case .faces: "faces"
        }
    }
}
