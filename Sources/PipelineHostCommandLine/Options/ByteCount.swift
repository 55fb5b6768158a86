import ArgumentParser
import PipelineHost

/// A byte count written as 1500, 64K, 500M or 2G (powers of 1024).
struct ByteCount: ExpressibleByArgument, Sendable {
    let bytes: Int

    init(_ bytes: Int) { self.bytes = bytes }

    init?(argument: String) {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var text = Substring(argument.uppercased())
        if text.hasSuffix("B") { text = text.dropLast() }
        var multiplier = 1
        if let last = text.last, let unit = units[last] {
            multiplier = unit
            text = text.dropLast()
        }
        guard let value = Double(text), value >= 0, value * Double(multiplier) < 1e18 else { return nil }
        bytes = Int(value * Double(multiplier))
    }

    var defaultValueDescription: String { ResultLine.bytes(bytes) }
}
