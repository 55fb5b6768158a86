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
        selfCgroup: read("/proc/self/cgroup"), reader: read, physical: physicalMemory())

    /// The default memory budget: `defaultShare` of the detected limit.
    public static var defaultBudget: Int { Int(Double(detected.bytes) * defaultShare) }

    /// The limit from `/proc/self/cgroup`'s text, the files `reader` reads, and `physical` bytes.
    /// A limit above the physical memory (v1 writes 9223372036854771712 for none) is none.
    static func detect(selfCgroup: String?, reader: (String) -> String?, physical: Int) -> Detected {
        for line in (selfCgroup ?? "").split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let path = fields[2] == "/" ? "" : String(fields[2])
            let candidates: [(file: String, origin: String)]
            if fields[0] == "0" && fields[1].isEmpty {
                candidates = [("/sys/fs/cgroup\(path)/memory.max", "cgroup v2 memory.max")]
            } else if fields[1].split(separator: ",").contains("memory") {
                candidates = [("/sys/fs/cgroup/memory\(path)/memory.limit_in_bytes", "cgroup v1 memory.limit_in_bytes")]
            } else {
                continue
            }
            for candidate in candidates {
                guard let text = reader(candidate.file)?.split(separator: "\n").first,
                    let bytes = Int(text), bytes > 0, bytes < physical
                else { continue }
                return Detected(bytes: bytes, origin: candidate.origin)
            }
        }
        return Detected(bytes: physical, origin: "physical memory")
    }

    private static func physicalMemory() -> Int {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), size = sysconf(Int32(_SC_PAGESIZE))
        guard pages > 0, size > 0 else { return 1 << 30 }
        return pages.multipliedReportingOverflow(by: size).overflow ? Int.max : pages * size
    }

    private static func read(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = fread(&buffer, 1, buffer.count - 1, file)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
