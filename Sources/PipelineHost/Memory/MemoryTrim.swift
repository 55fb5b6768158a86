#if canImport(Glibc)
    import Glibc
#endif

/// Gives memory back to the kernel after a burst. glibc keeps the pages of freed blocks in its
/// arenas, so a node that decoded many large images at once keeps their memory resident long
/// after (about 500 MB after 64 thumbnails of 7 MB PNGs and 27-megapixel JPEGs): when the budget
/// is drawn down to nothing after at least `threshold` was drawn, `malloc_trim` returns the free
/// pages, on a blocking thread, one trim at a time. imgproxy trims on a timer (its #1246); here
/// a burst's end is the moment.
final class MemoryTrim: Sendable {
    /// A burst that drew less than this leaves too little to be worth a trim.
    static let threshold = 64 << 20
    private let state = Locked((peak: 0, trimming: false))
    private let blocking: BlockingExecutor

    init(blocking: BlockingExecutor) { self.blocking = blocking }

    /// glibc's `malloc_trim`, looked up at run time: <malloc.h> is not in Swift's Glibc module,
    /// and a C library without it (musl) trims nothing.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = dlsym(nil, "malloc_trim").map {
        unsafeBitCast($0, to: (@convention(c) (Int) -> Int32).self)
    }

    /// Called with the budget's figures after every change.
    func observe(_ usage: MemoryUsage) {
        let trim = state.withLock { state -> Bool in
            state.peak = max(state.peak, usage.drawn)
            guard usage.drawn == 0, state.peak >= Self.threshold, !state.trimming else { return false }
            state = (0, true)
            return true
        }
        guard trim, let mallocTrim = Self.mallocTrim else { return }
        let blocking = blocking, state = state
        Task.detached(priority: .background) {
            await blocking.run { _ = mallocTrim(0) }
            state.withLock { $0.trimming = false }
        }
    }
}
