#if canImport(Glibc)
    import Glibc
#endif

/// This process's control groups, where their files are: `/proc/self/cgroup` names each group,
/// and `/proc/self/mountinfo` says where its hierarchy is mounted and which group the mount shows
/// as its root. On a host that root is "/"; inside a container (cgroup v1, or v2 without a cgroup
/// namespace) it is the container's own group, so the path the first names is not under the
/// mount as it stands. MemoryLimit and CPULimit read their limits through this.
enum Cgroup {
    /// Where a hierarchy is mounted, and the group it shows at `point`.
    struct Mount: Equatable {
        var root: String
        var point: String
    }

    /// One of this process's groups for a controller: its cgroup version, and its directory then
    /// those of the groups above it, up to the mount's own. A limit on any of them applies.
    struct Group: Equatable {
        var version: Int
        var directories: [String]
    }

    /// The cgroup v2 mount, and the v1 mounts by controller ("memory", "cpu").
    static func mounts(_ mountInfo: String?) -> (v2: Mount?, v1: [String: Mount]) {
        var found: (v2: Mount?, v1: [String: Mount]) = (nil, [:])
        for line in (mountInfo ?? "").split(separator: "\n") {
            // "id parent major:minor root point options [optional...] - type source superoptions"
            let halves = line.split(separator: " - ", maxSplits: 1)
            guard halves.count == 2 else { continue }
            let mount = halves[0].split(separator: " "), filesystem = halves[1].split(separator: " ")
            guard mount.count >= 5, let type = filesystem.first else { continue }
            let here = Mount(root: String(mount[3]), point: String(mount[4]))
            if type == "cgroup2" {
                found.v2 = found.v2 ?? here
            } else if type == "cgroup", filesystem.count >= 3 {
                for controller in filesystem[2].split(separator: ",") where found.v1[String(controller)] == nil {
                    found.v1[String(controller)] = here
                }
            }
        }
        return found
    }

    /// This process's groups that `controller` governs, in `/proc/self/cgroup`'s order. Without
    /// a mount in `mountInfo`, the usual places: /sys/fs/cgroup for v2, /sys/fs/cgroup/CONTROLLER
    /// for v1.
    static func groups(controller: String, selfCgroup: String?, mountInfo: String?) -> [Group] {
        let mounted = mounts(mountInfo)
        return (selfCgroup ?? "").split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { return nil }
            if fields[0] == "0" && fields[1].isEmpty {
                let mount = mounted.v2 ?? Mount(root: "/", point: "/sys/fs/cgroup")
                return Group(version: 2, directories: directories(of: String(fields[2]), in: mount))
            }
            guard fields[1].split(separator: ",").contains(Substring(controller)) else { return nil }
            let mount = mounted.v1[controller] ?? Mount(root: "/", point: "/sys/fs/cgroup/" + controller)
            return Group(version: 1, directories: directories(of: String(fields[2]), in: mount))
        }
    }

    /// The directories of the group at `path` and of each group above it, up to the mount's
    /// own, as they appear under the mount. A group outside the mount's root (a process moved
    /// out of it) is read at the mount point.
    static func directories(of path: String, in mount: Mount) -> [String] {
        let relative: Substring
        if mount.root == "/" {
            relative = path[...]
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

    /// A small file's text (the kernel reports no length for these files), or nil.
    static func read(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = fread(&buffer, 1, buffer.count - 1, file)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The first line of `path` as `reader` reads it.
    static func firstLine(_ path: String, _ reader: (String) -> String?) -> Substring? {
        reader(path)?.split(separator: "\n").first
    }
}
