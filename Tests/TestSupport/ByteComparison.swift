import PipelineHost

/// Nil when `a` and `b` hold the same bytes; otherwise their sizes and the first offset where
/// they differ, for `#expect(firstDifference(a, b) == nil)`. An `#expect(a.array == b.array)`
/// had Swift Testing compute the difference of the two arrays when it failed, which for images
/// of tens of kilobytes ran for minutes: a failure that looked like a hang.
public func firstDifference<A: RandomAccessCollection<UInt8>, B: RandomAccessCollection<UInt8>>(_ a: A, _ b: B)
    -> String?
{
    var offset = 0
    for (x, y) in zip(a, b) {
        if x != y { break }
        offset += 1
    }
    guard offset < max(a.count, b.count) else { return nil }
    return "\(a.count) bytes against \(b.count); the first difference is at byte \(offset)"
}

/// `firstDifference` of two outputs.
public func firstDifference(_ a: ImageBytes, _ b: ImageBytes) -> String? { firstDifference(a.buffer, b.buffer) }

/// `firstDifference` of an output and the bytes it should be.
public func firstDifference(_ a: ImageBytes, _ b: [UInt8]) -> String? { firstDifference(a.buffer, b) }
