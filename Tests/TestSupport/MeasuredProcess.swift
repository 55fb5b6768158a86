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

    /// `directory` holds the output log while it runs; pass absolute paths in `arguments`.
    public static func run(_ arguments: [String], in directory: String, timeout: Double = 60) throws -> Outcome {
        let id = UUID().uuidString
        let log = directory + "/measured-\(id).log", peak = directory + "/measured-\(id).peak"
        defer {
            try? FileManager.default.removeItem(atPath: log)
            try? FileManager.default.removeItem(atPath: peak)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", measure, peak, CLIProcess.executable] + arguments
        guard FileManager.default.createFile(atPath: log, contents: nil) else { throw ServerError("cannot create \(log)") }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline {
                process.terminate()
                throw ServerError("pipelinehost \(arguments.joined(separator: " ")) did not finish in \(timeout) s")
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        try handle.close()
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        let kilobytes = (try? String(contentsOfFile: peak, encoding: .utf8)).flatMap { Int($0) } ?? Int.max
        return Outcome(status: process.terminationStatus, output: output, peakKilobytes: kilobytes)
    }
}
