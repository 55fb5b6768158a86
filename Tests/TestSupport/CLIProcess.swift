import Foundation
import PipelineHost

/// Runs the built `pipelinehost` executable as a subprocess, as a user would.
public enum CLIProcess {
    public struct Outcome: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
        public var output: String { stdout + stderr }
    }

    /// scripts/test sets PIPELINEHOST_BIN; otherwise the debug build in .build is used.
    public static var executable: String {
        ProcessInfo.processInfo.environment["PIPELINEHOST_BIN"] ?? Fixtures.path(".build/debug/pipelinehost")
    }

    /// Runs the executable to its end, once one of `ProcessSlots.cli` is free; `timeout` counts
    /// from its start.
    public static func run(
        _ arguments: [String], in directory: String? = nil, input: String? = nil,
        environment: [String: String] = [:], timeout: Double = 120
    ) async throws -> Outcome {
        try await ProcessSlots.cli.run {
            try await start(arguments, in: directory, input: input, environment: environment).finished(timeout: timeout)
        }
    }

    /// Runs the executable with a pseudo-terminal as its standard streams, through util-linux's
    /// `script`, as a user at a terminal would. Standard output and error arrive mixed.
    public static func runInTerminal(_ arguments: [String], timeout: Double = 120) async throws -> Outcome {
        let command = ([executable] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            .joined(separator: " ")
        return try await ProcessSlots.cli.run {
            try await start(["-qec", command, "/dev/null"], executable: "/usr/bin/script").finished(timeout: timeout)
        }
    }

    /// Starts the executable and returns at once, for tests that signal it mid-run.
    /// `environment` is added to this process's environment for the child only.
    public static func start(
        _ arguments: [String], in directory: String? = nil, input: String? = nil,
        environment: [String: String] = [:],
        executable: String = CLIProcess.executable
    ) throws -> Running {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw ServerError("no pipelinehost executable at \(executable); run `swift build` first")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let (childEnvironment, scratchCache) = isolatedCache(environment)
        process.environment = ProcessInfo.processInfo.environment.merging(childEnvironment) { $1 }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe(), err = Pipe(), stdin = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin
        try process.run()
        stdin.fileHandleForWriting.write(Data((input ?? "").utf8))
        try stdin.fileHandleForWriting.close()
        // Read both pipes while the process runs, so a full pipe never blocks it.
        return Running(
            process: process, arguments: arguments, scratchCache: scratchCache,
            stdout: Collector(out.fileHandleForReading), stderr: Collector(err.fileHandleForReading))
    }

    /// Every run gets an empty default cache directory of its own, so one test's (or one
    /// developer's) cache never changes what another counts. Tests that share a cache between
    /// runs pass --cache-dir or XDG_CACHE_HOME. The directory made here is returned, so that it
    /// goes away with the run.
    private static func isolatedCache(_ environment: [String: String]) -> ([String: String], String?) {
        guard environment["XDG_CACHE_HOME"] == nil else { return (environment, nil) }
        var environment = environment
        let directory = NSTemporaryDirectory() + "pipelinehost-cli-cache-" + UUID().uuidString
        environment["XDG_CACHE_HOME"] = directory
        return (environment, directory)
    }

    /// A pipelinehost process that is running.
    public final class Running: Sendable {
        private let process: Process
        private let arguments: [String]
        private let stdout: Collector
        private let stderr: Collector
        private let scratchCache: String?

        init(process: Process, arguments: [String], scratchCache: String?, stdout: Collector, stderr: Collector) {
            self.process = process
            self.arguments = arguments
            self.scratchCache = scratchCache
            self.stdout = stdout
            self.stderr = stderr
        }

        /// The run's own cache directory goes with it: a process still running is killed first,
        /// so that it cannot write the directory back. The wait is bounded (10 s): Foundation counts
        /// a process as running while a child it left holds its descriptor, and a test that failed
        /// must not hang here.
        deinit {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                var waits = 0
                while process.isRunning && waits < 1000 {
                    usleep(10_000)
                    waits += 1
                }
            }
            if let scratchCache { try? FileManager.default.removeItem(atPath: scratchCache) }
        }

        /// What it has written to standard output and error so far.
        public var outputSoFar: String { stdout.partial() + stderr.partial() }

        /// Sends SIGINT, as Ctrl-C in a terminal would.
        public func interrupt() { kill(process.processIdentifier, SIGINT) }

        /// Sends `signal` (SIGTERM, SIGHUP, ...).
        public func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

        /// Whether the process is still running.
        public var isRunning: Bool { process.isRunning }

        /// Its process id.
        public var pid: Int32 { process.processIdentifier }

        /// Waits for the process to end, on a thread of its own: a test waiting for a subprocess must
        /// hold neither a cooperative thread nor one of Dispatch's (with two cores, either kind of
        /// wait starved the pipeline tests' `eventually` deadlines).
        public func finished(timeout: Double = 120) async throws -> Outcome {
            try await onOwnThread { try self.wait(timeout: timeout) }
        }

        /// Blocks the calling thread until the process ends; `finished` is the one tests use.
        public func wait(timeout: Double = 120) throws -> Outcome {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning {
                if Date() > deadline {
                    process.terminate()
                    throw ServerError("pipelinehost \(arguments.joined(separator: " ")) did not finish in \(timeout) s")
                }
                Thread.sleep(forTimeInterval: 0.01)
            }
            return Outcome(status: process.terminationStatus, stdout: stdout.text(), stderr: stderr.text())
        }
    }

    /// Reads a pipe to its end on another thread.
    final class Collector: Sendable {
        private let data = Locked(Data())
        private let done = DispatchSemaphore(value: 0)

        init(_ handle: FileHandle) {
            DispatchQueue.global().async { [self] in
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    data.withLock { $0.append(chunk) }
                }
                done.signal()
            }
        }

        func partial() -> String { data.withLock { String(decoding: $0, as: UTF8.self) } }

        func text() -> String {
            done.wait()
            return partial()
        }
    }
}
