#if canImport(Glibc)
    import Glibc
#endif

/// How much memory this process may use, from where it runs: its memory cgroup's limit (v2
/// `memory.max`, v1 `memory.limit_in_bytes`), or else the machine's physical memory. The
/// default memory budget is a share of it.
public enum MemoryLimit {
    /// The limit, and where it came from ("cgroup v2 memory.max", "physical memory").
    public struct Detected: Sendable, Equatable {
        /// The limit, in bytes.
        public var bytes: Int
        /// Where it was read: "cgroup v2 memory.max", "cgroup v1 memory.limit_in_bytes", "physical memory".
        public var origin: String
    }

    /// The image work's share of the limit by default: half. The rest is for what the budget does
    /// not count (the memory cache, 128 MiB by default; libvips' and libjpeg's caches; the
    /// process itself) and for the room `MemoryLedger` may overdraw to keep work moving.
    public static let defaultShare = 0.5

    /// The limit this process runs under, read once.
    public static let detected: Detected = detect(
        selfCgroup: Cgroup.read("/proc/self/cgroup"), mountInfo: Cgroup.read("/proc/self/mountinfo"),
        reader: Cgroup.read, physical: physicalMemory())

    /// The default memory budget: `defaultShare` of the detected limit.
    public static var defaultBudget: Int { Int(Double(detected.bytes) * defaultShare) }

    /// The limit from `/proc/self/cgroup`'s text, `/proc/self/mountinfo`'s, the files `reader`
    /// reads, and `physical` bytes: the smallest of the group's and those of the groups above it,
    /// as the kernel enforces them (`Cgroup`). A limit above the physical memory (v1 writes
    /// 9223372036854771712 for none) is none.
    static func detect(selfCgroup: String?, mountInfo: String?, reader: (String) -> String?, physical: Int) -> Detected
    {
        for group in Cgroup.groups(controller: "memory", selfCgroup: selfCgroup, mountInfo: mountInfo) {
            let (file, origin) =
                group.version == 2
                ? ("memory.max", "cgroup v2 memory.max") : ("memory.limit_in_bytes", "cgroup v1 memory.limit_in_bytes")
            let limits = group.directories.compactMap { directory -> Int? in
                guard let text = Cgroup.firstLine(directory + "/" + file, reader), let bytes = Int(text), bytes > 0,
                    bytes < physical
                else { return nil }
                return bytes
            }
            if let smallest = limits.min() { return Detected(bytes: smallest, origin: origin) }
        }
        return Detected(bytes: physical, origin: "physical memory")
    }

    private static func physicalMemory() -> Int {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), size = sysconf(Int32(_SC_PAGESIZE))
        guard pages > 0, size > 0 else { return 1 << 30 }
        return pages.multipliedReportingOverflow(by: size).overflow ? Int.max : pages * size
    }
}
