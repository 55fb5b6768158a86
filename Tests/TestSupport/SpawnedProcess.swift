import Foundation

/// Runs a program that leaves a daemon behind, and waits for the program alone. `podman run -d`
/// is one: it starts conmon, which outlives it. Foundation's Process counts a child as running
/// until every process holding the descriptor it gave the child has exited, so it would wait for
/// the container; this waits for the program's own exit (waitpid), and its output goes to files,
/// which a daemon cannot hold open.
public enum SpawnedProcess {
    /// Runs `executable` with `arguments` and `environment` added to this process's, on a thread
    /// of its own; after `timeout` seconds it is killed and the run throws.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: Double = 120
    ) async throws -> CLIProcess.Outcome {
        try await onOwnThread { try runBlocking(executable, arguments, environment: environment, timeout: timeout) }
    }

    /// `run`, blocking the calling thread: for a deinit or a `defer`, which cannot await.
    public static func runBlocking(
        _ executable: String, _ arguments: [String], environment: [String: String], timeout: Double
    ) throws -> CLIProcess.Outcome {
        let directory = try TemporaryDirectory()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, directory.file("out"), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, directory.file("err"), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for string in argv + envp { free(string) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard spawned == 0 else {
            throw ServerError("cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(timeout)
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Date() > deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                throw ServerError("\(executable) \(arguments.joined(separator: " ")) did not finish in \(timeout) s")
            }
            usleep(10_000)
        }
        let read = { (name: String) in (try? String(contentsOfFile: directory.file(name), encoding: .utf8)) ?? "" }
        // The exit status, or 128 + the signal that ended it, as a shell reports it.
        let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return CLIProcess.Outcome(status: exit, stdout: read("out"), stderr: read("err"))
    }
}
