import Glibc
import PipelineHost

/// Standard output's reader went away (`run --json | head -1`). SIGPIPE is ignored while a run
/// works, so the write fails with EPIPE instead of killing the process in the middle of writing
/// a file: the run stops as after Ctrl-C, its files are finished or removed, the cache is
/// flushed, and only then does the process end by SIGPIPE, as the Unix default would have.
enum BrokenPipe {
    private static let state = Locked<(broken: Bool, onBroken: (@Sendable () -> Void)?)>((false, nil))

    /// Ignores SIGPIPE and calls `action` once, on the first failed write to standard output.
    static func whenBroken(_ action: @escaping @Sendable () -> Void) {
        signal(SIGPIPE, SIG_IGN)
        state.withLock { $0.onBroken = action }
    }

    /// Called by the writer on EPIPE.
    static func noticed() {
        let action: (@Sendable () -> Void)? = state.withLock { state in
            guard !state.broken else { return nil }
            state.broken = true
            return state.onBroken
        }
        action?()
    }

    static var isBroken: Bool { state.withLock { $0.broken } }

    /// Ends the process the way the default SIGPIPE action would (status 128 + 13 in a shell).
    static func exitAsDefault() -> Never {
        AtomicFile.removePendingTemporaries()
        signal(SIGPIPE, SIG_DFL)
        raise(SIGPIPE)
        _exit(128 + SIGPIPE)
    }
}
