import PipelineHostServe

#if canImport(Glibc)
    import Glibc
#endif

/// The open-file limit, which bounds how many connections serve may hold.
enum OpenFiles {
    /// `ServeDefaults.maxConnections`, or three quarters of the open-file limit (raised to its
    /// hard maximum first) if that is lower: the rest is left for the disk cache, transfers and
    /// Redis.
    static func connectionLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 768 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return max(16, min(ServeDefaults.maxConnections, Int(clamping: limit.rlim_cur) * 3 / 4))
    }
}
