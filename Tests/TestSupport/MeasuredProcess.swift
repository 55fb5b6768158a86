import Foundation

/// Runs the `pipelinehost` executable and reports its peak resident memory, read from the
/// kernel's accounting of the child (wait4's rusage), for tests of the promised memory bounds.
public enum MeasuredProcess {
    public struct Outcome: Sendable {
        public let status: Int32
        public let output: String
        /// ru_maxrss: the child's peak resident set, in kilobytes.
        public let peakKilobytes: Int
    }

    /// `directory` holds the output log while it runs; pass absolute paths in `arguments`.
    public static func run(_ arguments: [String], in directory: String, timeout: Double = 60) throws -> Outcome {
        let log = directory + "/measured-\(UUID().uuidString).log"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([CLIProcess.executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, CLIProcess.executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw ServerError("cannot start \(CLIProcess.executable): \(String(cString: strerror(spawned)))") }
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, WNOHANG, &usage) == 0 {
            if Date() > deadline {
                kill(pid, SIGKILL)
                _ = wait4(pid, &status, 0, &usage)
                throw ServerError("pipelinehost \(arguments.joined(separator: " ")) did not finish in \(timeout) s")
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: log)
        // The exit status as a shell reports it: the code, or 128 + the signal.
        let code = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Outcome(status: code, output: output, peakKilobytes: usage.ru_maxrss)
    }
}
