#if canImport(Glibc)
    import Glibc
#endif

/// Where the cache reads the time of day, in seconds since 1970: the wall clock, because
/// freshness is stored on disk and in shared tiers and outlives the process. Every freshness
/// decision (is an entry fresh, when does a store expire) takes its time from here, so a test
/// moves the clock instead of sleeping: `WallClock { start + advanced }`.
public struct WallClock: Sendable {
    private let read: @Sendable () -> Double

    /// A clock that reads `read`.
    public init(_ read: @escaping @Sendable () -> Double) { self.read = read }

    /// The system's real-time clock.
    public static let system = WallClock(wallClock)

    /// The time now, in seconds since 1970.
    public var now: Double { read() }
}

/// Wall-clock seconds since 1970.
func wallClock() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
