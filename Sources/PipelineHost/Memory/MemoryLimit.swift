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
        selfCgroup: read("/proc/self/cgroup"), mountInfo: read("/proc/self/mountinfo"), reader: read,
        physical: physicalMemory())

    /// The default memory budget: `defaultShare` of the detected limit.
    public static var defaultBudget: Int { Int(Double(detected.bytes) * defaultShare) }

    /// Where a cgroup hierarchy is mounted: the group its mount shows (`root`, "/" on a host; the
    /// container's own group inside a container on cgroup v1, or v2 without a cgroup namespace)
    /// at `point`.
    struct Mount: Equatable {
        var root: String
        var point: String
    }

    /// The cgroup v2 mount and the cgroup v1 memory controller's, from `/proc/self/mountinfo`.
    static func mounts(_ mountInfo: String?) -> (v2: Mount?, v1Memory: Mount?) {
        var found: (v2: Mount?, v1Memory: Mount?) = (nil, nil)
        for line in (mountInfo ?? "").split(separator: "\n") {
            // "id parent major:minor root point options [optional...] - type source superoptions"
            let halves = line.split(separator: " - ", maxSplits: 1)
            guard halves.count == 2 else { continue }
            let mount = halves[0].split(separator: " "), filesystem = halves[1].split(separator: " ")
            guard mount.count >= 5, let type = filesystem.first else { continue }
            let here = Mount(root: String(mount[3]), point: String(mount[4]))
            if type == "cgroup2" && found.v2 == nil {
                found.v2 = here
            } else if type == "cgroup", filesystem.count >= 3, filesystem[2].split(separator: ",").contains("memory") {
                found.v1Memory = found.v1Memory ?? here
            }
        }
        return found
    }

    /// The limit from `/proc/self/cgroup`'s text, `/proc/self/mountinfo`'s, the files `reader`
    /// reads, and `physical` bytes. The group's directory is found through its mount, so a
    /// container that sees its own group as the mount's root reads that group's limit. The
    /// smallest limit of the group and the groups above it counts, as the kernel enforces it. A
    /// limit above the physical memory (v1 writes 9223372036854771712 for none) is none.
    static func detect(selfCgroup: String?, mountInfo: String?, reader: (String) -> String?, physical: Int) -> Detected
    {
        let mounted = mounts(mountInfo)
        for line in (selfCgroup ?? "").split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let mount: Mount, file: String, origin: String
            if fields[0] == "0" && fields[1].isEmpty {
                (mount, file, origin) = (
                    mounted.v2 ?? Mount(root: "/", point: "/sys/fs/cgroup"), "memory.max", "cgroup v2 memory.max"
                )
            } else if fields[1].split(separator: ",").contains("memory") {
                (mount, file, origin) = (
                    mounted.v1Memory ?? Mount(root: "/", point: "/sys/fs/cgroup/memory"), "memory.limit_in_bytes",
                    "cgroup v1 memory.limit_in_bytes"
                )
            } else {
                continue
            }
            let limits = directories(of: String(fields[2]), in: mount).compactMap { directory -> Int? in
                guard let text = reader(directory + "/" + file)?.split(separator: "\n").first,
                    let bytes = Int(text), bytes > 0, bytes < physical
                else { return nil }
                return bytes
            }
            if let smallest = limits.min() { return Detected(bytes: smallest, origin: origin) }
        }
        return Detected(bytes: physical, origin: "physical memory")
    }

    /// The directories of the group at `path` and of each group above it, up to the mount's
    /// own, as they appear under the mount. A group outside the mount's root (a process moved
    /// out of it) is read at the mount point.
    static func directories(of path: String, in mount: Mount) -> [String] {
        let relative: Substring
        if mount.root == "/" {
            relative = path == "/" ? "" : path[...]
        } else if path == mount.root || path.hasPrefix(mount.root + "/") {
            relative = path.dropFirst(mount.root.count)
        } else {
            relative = ""
        }
        var parts = relative.split(separator: "/")
        var found: [String] = []
        while true {
            found.append(([mount.point] + parts.map(String.init)).joined(separator: "/"))
            if parts.isEmpty { return found }
            parts.removeLast()
        }
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
