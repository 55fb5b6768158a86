import ArgumentParser

/// Every number a flag gives is held to its range where the command validates it, so no later
/// conversion (seconds to a `Duration`, a count to a buffer size) can trap: `--drain-timeout
/// 1e300` or `--shared-timeout 9223372036854775807` is a usage error naming the flag and range.
enum FlagRange {
    /// The longest time any flag takes: a day. Longer is no limit at all for a request, a drain or
    /// a lease, and keeps every conversion far from overflow.
    static let maxSeconds: Double = 86_400

    /// `value` seconds as a Duration, when it is finite and within `range`.
    static func seconds(_ value: Double, _ flag: String, in range: ClosedRange<Double>) throws -> Duration {
        guard value.isFinite, range.contains(value) else {
            throw ValidationError(
                "\(flag) must be between \(text(range.lowerBound)) and \(text(range.upperBound)) seconds, got \(value)")
        }
        return .milliseconds(Int((value * 1000).rounded()))
    }

    /// `value` when it is within `range`.
    @discardableResult
    static func count(_ value: Int, _ flag: String, in range: ClosedRange<Int>) throws -> Int {
        guard range.contains(value) else {
            throw ValidationError("\(flag) must be between \(range.lowerBound) and \(range.upperBound), got \(value)")
        }
        return value
    }

    private static func text(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
