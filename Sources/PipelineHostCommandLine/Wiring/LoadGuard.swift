import ArgumentParser
import Dispatch
import Glibc
import PipelineHost
import PipelineProfiles

/// Watches over loading a profile file. SIGINT or SIGTERM ends the process with 130 and a
/// message instead of the signal's default action. A load that outlives the sandbox's time
/// limit by ten seconds ends the process with 2: the last line of defence, since the sandbox's
/// own limits stop every script we know of well before that. The margin is wide because the
/// timer counts wall time, which a busy machine stretches: checking a large profile's values
/// after its script ran (7,000 option values, say) took over a second on two loaded cores, and
/// was killed as a hang when the margin was one second.
///
/// The signals use a plain handler, not dispatch sources: a dispatch signal source cancelled
/// here could still be unregistering when `SignalWatcher` registers its own for the run.
final class LoadGuard: Sendable {
    private nonisolated(unsafe) let timer: any DispatchSourceTimer

    /// The message the signal handler writes; set before the handler is installed and kept for
    /// the life of the process (a handler may only make async-signal-safe calls).
    private nonisolated(unsafe) static var message: (pointer: UnsafeMutablePointer<CChar>?, length: Int) = (nil, 0)

    init(file: String, limits: ProfileLimits) {
        let text = "interrupted while loading \(file)\n"
        free(Self.message.pointer)
        Self.message = (strdup(text), text.utf8.count)
        for number in [SIGINT, SIGTERM] {
            signal(number) { _ in
                _ = write(2, LoadGuard.message.pointer, LoadGuard.message.length)
                _exit(130)
            }
        }
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "pipelinehost.load-guard"))
        timer.schedule(deadline: .now() + limits.seconds + Self.margin)
        timer.setEventHandler {
            _exit(
                usageError("\(file): profile exceeded the time limit (\(limits.seconds) s) and did not stop").rawValue)
        }
        timer.resume()
    }

    /// Seconds past the sandbox's time limit before the guard ends the process.
    static let margin = 10.0

    /// Loading is over: the signals get their default action again until a run installs its
    /// own handling.
    func finish() {
        timer.cancel()
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
