import ArgumentParser
import Dispatch
import Glibc

/// Turns SIGINT and SIGTERM into a call to `onInterrupt`, once. A second signal means the user
/// will not wait for a clean stop: temporary files are removed and the process exits at once.
final class SignalWatcher: Sendable {
    private nonisolated(unsafe) let sources: [any DispatchSourceSignal]

    init(_ onInterrupt: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "pipelinehost.signals")
        let count = Counter()
        sources = [SIGINT, SIGTERM].map { number in
            // Ignored at the process level so the dispatch source, not the default action, sees it.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                if count.next() == 1 {
                    onInterrupt()
                } else {
                    AtomicFile.removePendingTemporaries()
                    printError("interrupted again: stopping now")
                    _exit(ExitCode.interrupted.rawValue)
                }
            }
            source.resume()
            return source
        }
    }

    deinit {
        for source in sources { source.cancel() }
    }

    /// Signals seen so far; touched only on the watcher's serial queue.
    private final class Counter: @unchecked Sendable {
        private var value = 0
        func next() -> Int {
            value += 1
            return value
        }
    }
}
