#if canImport(Glibc)
    import Glibc
#endif

/// How many cores this process may keep busy, from where it runs: the CPUs it may run on (a
/// cpuset, `--cpuset-cpus`) and its cgroup's CPU quota (`--cpus`, a Kubernetes CPU limit),
/// rounded up, or else the cores online. The pipeline runs one CPU stage per core; sized from the
/// host's cores, a container with a quota of two would run as many threads as the host has and
/// spend its quota in bursts, throttled between them.
public enum CPULimit {
    /// The cores, and what set them ("cgroup v2 cpu.max", "CPU affinity", "online cores").
    public struct Detected: Sendable, Equatable {
        /// At least 1.
        public var cores: Int
        /// What limited them.
        public var origin: String
    }

    /// The limit this process runs under, read once.
    public static let detected: Detected = detect(
        selfCgroup: Cgroup.read("/proc/self/cgroup"), mountInfo: Cgroup.read("/proc/self/mountinfo"),
        reader: Cgroup.read, online: max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))), affinity: affinityCores())

    /// The smallest of `online`, `affinity` and the quota of the process's CPU group or of a group
    /// above it (v2 `cpu.max`, v1 `cpu.cfs_quota_us` over `cpu.cfs_period_us`), rounded up.
    static func detect(
        selfCgroup: String?, mountInfo: String?, reader: (String) -> String?, online: Int, affinity: Int?
    ) -> Detected {
        var best = Detected(cores: max(1, online), origin: "online cores")
        if let affinity, affinity > 0, affinity < best.cores {
            best = Detected(cores: affinity, origin: "CPU affinity")
        }
        for group in Cgroup.groups(controller: "cpu", selfCgroup: selfCgroup, mountInfo: mountInfo) {
            let quotas = group.directories.compactMap { directory -> Int? in
                let quota: Int?, period: Int?
                if group.version == 2 {
                    let fields = Cgroup.firstLine(directory + "/cpu.max", reader)?.split(separator: " ") ?? []
                    // "max 100000" is no quota.
                    (quota, period) = fields.count == 2 ? (Int(fields[0]), Int(fields[1])) : (nil, nil)
                } else {
                    // A quota of -1 is none.
                    quota = Cgroup.firstLine(directory + "/cpu.cfs_quota_us", reader).flatMap { Int($0) }
                    period = Cgroup.firstLine(directory + "/cpu.cfs_period_us", reader).flatMap { Int($0) }
                }
                guard let quota, let period, quota > 0, period > 0 else { return nil }
                return max(1, (quota + period - 1) / period)
            }
            if let smallest = quotas.min(), smallest < best.cores {
                best = Detected(
                    cores: smallest, origin: group.version == 2 ? "cgroup v2 cpu.max" : "cgroup v1 cpu.cfs_quota_us")
            }
        }
        return best
    }

    /// The CPUs this process may run on: /proc/self/status's Cpus_allowed_list ("0-3,8"), the
    /// affinity a cpuset or `taskset` gives it (Swift's Glibc has no sched_getaffinity), or nil.
    static func affinityCores(status: String? = Cgroup.read("/proc/self/status")) -> Int? {
        guard let line = status?.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }) else {
            return nil
        }
        var count = 0
        for range in line.dropFirst("Cpus_allowed_list:".count).split(separator: ",") {
            let ends = range.split(separator: "-").map { Int($0.trimmingWhitespace) }
            guard let first = ends.first ?? nil, let last = ends.last ?? nil, last >= first, ends.count <= 2 else {
                return nil
            }
            count += last - first + 1
        }
        return count > 0 ? count : nil
    }
}

extension Substring {
    /// Without the spaces and tabs around it.
    fileprivate var trimmingWhitespace: Substring {
        guard let first = firstIndex(where: { $0 != " " && $0 != "\t" }),
            let last = lastIndex(where: { $0 != " " && $0 != "\t" && $0 != "\n" })
        else { return "" }
        return self[first...last]
    }
}
