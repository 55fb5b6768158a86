import Foundation

/// Runs the `pipelinehost` executable and reports its peak resident memory, for tests of the
/// promised memory bounds.
///
/// The figure comes from wait4's rusage, taken by `pipelinehost-peak-memory` (Tests/PeakMemory,
/// a small C program built with the tests), which forks the CLI. Spawned straight from the test
/// runner, the child would report the runner's own peak (a few hundred MB): Linux keeps the
/// high-water mark of the address space a child had before exec, and posix_spawn's child shares
/// the runner's until then. A fork of a small process starts from that process's size instead.
public enum MeasuredProcess {
    public struct Outcome: Sendable {
        public let status: Int32
        public let output: String
        /// ru_maxrss: the child's peak resident set, in kilobytes.
        public let peakKilobytes: Int
    }

    /// The helper, next to the test runner (the same build directory).
    static var helper: String {
        let runner =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: runner).deletingLastPathComponent().appendingPathComponent(
            "pipelinehost-peak-memory"
        ).path
    }

    /// `directory` holds the figure while it runs; pass absolute paths in `arguments`.
    public static func run(_ arguments: [String], in directory: String, timeout: Double = 60) throws -> Outcome {
        let peak = directory + "/measured-\(UUID().uuidString).peak"
        defer { try? FileManager.default.removeItem(atPath: peak) }
        let run = try CLIProcess.start([peak, CLIProcess.executable] + arguments, executable: helper).wait(
            timeout: timeout)
        let kilobytes = (try? String(contentsOfFile: peak, encoding: .utf8)).flatMap { Int($0) } ?? Int.max
        return Outcome(status: run.status, output: run.output, peakKilobytes: kilobytes)
    }
}
