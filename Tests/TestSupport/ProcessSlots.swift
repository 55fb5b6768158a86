import Foundation
import PipelineHost

/// How many short-lived `pipelinehost` runs the test process lets run at once: twice the cores.
///
/// Every suite runs at once, and the CLI suites' parameterized cases start a process each. Each
/// run is bounded by a clock (so that a hang fails); with no bound on how many start together,
/// that clock measured the queue for the cores rather than the run: on a busy two-core machine
/// (2026-11-30) an `info --jobs=-1`, which only prints a range error, did not finish in 120 s.
/// A run's clock starts when it has a slot. Waiting for one suspends; it holds no thread.
///
/// Only runs that go start to end take a slot (`CLIProcess.run`): a process a test starts and
/// signals, or several that must run together, would wait on each other here.
public final class ProcessSlots: Sendable {
    public static let cli = ProcessSlots(max(2, 2 * ProcessInfo.processInfo.activeProcessorCount))

    private let state: Locked<(free: Int, waiting: [CheckedContinuation<Void, Never>])>

    init(_ count: Int) { state = Locked((count, [])) }

    /// Runs `work` once a slot is free, and frees it after.
    public func run<T: Sendable>(_ work: () async throws -> T) async throws -> T {
        await take()
        defer { give() }
        return try await work()
    }

    private func take() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard state.free == 0 else {
                    state.free -= 1
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Hands the slot to the longest waiter, or frees it.
    private func give() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
