import ArgumentParser
import Dispatch
import Glibc
import PipelineHost

/// Watches over loading a profile file. SIGINT or SIGTERM ends the process with 130 and a
/// message instead of the signal's default action. A load that outlives the sandbox's time
/// limit by a second ends the process with 2: the last line of defence, since the sandbox's own
/// limits stop every script we know of well before that.
final class LoadGuard: Sendable {
    private nonisolated(unsafe) let sources: [any DispatchSourceProtocol]

    init(file: String, limits: ProfileLimits) {
        let queue = DispatchQueue(label: "pipelinehost.load-guard")
        var sources: [any DispatchSourceProtocol] = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)  // the dispatch source, not the default action, sees it
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                printError("interrupted while loading \(file)")
                _exit(ExitCode.interrupted.rawValue)
            }
            return source
        }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + limits.seconds + 1)
        timer.setEventHandler {
            printError("error: \(file): profile exceeded the time limit (\(limits.seconds) s) and did not stop")
            _exit(ExitCode.usage.rawValue)
        }
        sources.append(timer)
        for source in sources { source.resume() }
        self.sources = sources
    }

    /// Loading is over: signals get their default action again until a run installs its own
    /// handling.
    func finish() {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
