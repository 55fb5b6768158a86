import Foundation

/// Runs the `pipelinehost` executable and reports its peak resident memory, for tests of the
/// promised memory bounds.
///
/// The figure comes from wait4's rusage, taken by a small python3 process that forks the CLI.
/// Spawned straight from the test runner, the child would report the runner's own peak (a few
/// hundred MB): Linux keeps the high-water mark of the address space a child had before exec,
/// and posix_spawn's child shares the runner's until then. A fork of a small process starts
/// from that process's few megabytes instead.
public enum MeasuredProcess {
    public struct Outcome: Sendable {
        public let status: Int32
        public let output: String
        /// ru_maxrss: the child's peak resident set, in kilobytes (at least python's few MB).
        public let peakKilobytes: Int
    }

    static let measure = """
        import os, sys
        pid = os.fork()
        if pid == 0:
            os.execv(sys.argv[2], sys.argv[2:])
        _, status, usage = os.wait4(pid, 0)
        with open(sys.argv[1], "w") as out:
            out.write(str(usage.ru_maxrss))
        sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
        """

    /// `directory` holds the figure while it runs; pass absolute paths in `arguments`.
    public static func run(_ arguments: [String], in directory: String, timeout: Double = 60) throws -> Outcome {
        let peak = directory + "/measured-\(UUID().uuidString).peak"
        defer { try? FileManager.default.removeItem(atPath: peak) }
        let run = try CLIProcess.start(["python3", "-c", measure, peak, CLIProcess.executable] + arguments,
                                       executable: "/usr/bin/env").wait(timeout: timeout)
        let kilobytes = (try? String(contentsOfFile: peak, encoding: .utf8)).flatMap { Int($0) } ?? Int.max
        return Outcome(status: run.status, output: run.output, peakKilobytes: kilobytes)
    }
}
