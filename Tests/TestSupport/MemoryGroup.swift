import Foundation

/// A cgroup v1 memory group of its own, made under /sys/fs/cgroup/memory (the tests run as
/// root): a process started in it runs under `limit` bytes, as in a memory-limited container,
/// and the kernel OOM-kills it past them. Removed by `remove()`.
public final class MemoryGroup: Sendable {
    public let path: String
    public let limit: Int

    /// Nil when this machine has no cgroup v1 memory controller to make groups in.
    public init?(limit: Int) throws {
        let root = "/sys/fs/cgroup/memory"
        guard FileManager.default.fileExists(atPath: root + "/memory.limit_in_bytes") else { return nil }
        path = root + "/pipelinehost-test-" + UUID().uuidString.prefix(8)
        self.limit = limit
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        try write("memory.limit_in_bytes", String(limit))
    }

    /// The arguments that run `command` inside the group: a shell enters it, then execs.
    public func launching(_ command: [String]) -> (executable: String, arguments: [String]) {
        ("/bin/sh", ["-c", "echo $$ > \(path)/cgroup.procs && exec \"$0\" \"$@\""] + command)
    }

    /// How many processes of the group the kernel OOM-killed (memory.oom_control's oom_kill).
    public var oomKills: Int {
        let text = (try? String(contentsOfFile: path + "/memory.oom_control", encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") where line.hasPrefix("oom_kill ") {
            return Int(line.split(separator: " ")[1]) ?? 0
        }
        return 0
    }

    /// Removes the group; its processes must have exited.
    public func remove() {
        rmdir(path)
    }

    /// A test that failed before `remove()` leaves no group behind: what still runs in it is
    /// killed, and the group removed once the kernel has let them go (a second at most).
    deinit {
        guard FileManager.default.fileExists(atPath: path) else { return }
        let procs = (try? String(contentsOfFile: path + "/cgroup.procs", encoding: .utf8)) ?? ""
        for pid in procs.split(separator: "\n").compactMap({ pid_t($0) }) { kill(pid, SIGKILL) }
        var tries = 0
        while rmdir(path) != 0, errno == EBUSY, tries < 100 {
            tries += 1
            usleep(10_000)
        }
    }

    private func write(_ file: String, _ value: String) throws {
        try value.write(toFile: path + "/" + file, atomically: false, encoding: .utf8)
    }
}
