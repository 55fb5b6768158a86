/// Where a crop keeps the image, or where a canvas puts it: the compass points as fractions of
/// the width and height (north is the middle of the top edge).
enum Gravity {
    static let compass: [(name: String, x: Double, y: Double)] = [
        ("centre", 0.5, 0.5), ("north", 0.5, 0), ("south", 0.5, 1), ("east", 1, 0.5), ("west", 0, 0.5),
        ("north_east", 1, 0), ("north_west", 0, 0), ("south_east", 1, 1), ("south_west", 0, 1),
    ]
    static var names: [String] { compass.map(\.name) }

    /// The point of a compass name.
    static func point(_ name: String) -> (x: Double, y: Double)? {
        compass.first { $0.name == name }.map { ($0.x, $0.y) }
    }
}
