import Foundation
import Synchronization

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

    public static func run(_ arguments: [String], in directory: String? = nil, timeout: Double = 120) throws -> Outcome {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw ServerError("no pipelinehost executable at \(executable); run `swift build` first")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes while the process runs, so a full pipe never blocks it.
        let stdout = Collector(out.fileHandleForReading), stderr = Collector(err.fileHandleForReading)
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

    /// Reads a pipe to its end on another thread.
    private final class Collector: Sendable {
        private let data = Mutex(Data())
        private let done = DispatchSemaphore(value: 0)

        init(_ handle: FileHandle) {
            DispatchQueue.global().async { [self] in
                let bytes = handle.readDataToEndOfFile()
                data.withLock { $0 = bytes }
                done.signal()
            }
        }

        func text() -> String {
            done.wait()
            return data.withLock { String(decoding: $0, as: UTF8.self) }
        }
    }
}
