import Glibc
import PipelineHost

/// Shows how far a batch is. On a terminal: one live line on stderr with a bar, done/failed/total,
/// rate and ETA, redrawn as results arrive. Otherwise (a pipe, a log file, CI): a plain
/// progress line at most every 10 seconds, so logs stay readable.
struct ProgressDisplay {
    private let total: Int
    private let live: Bool
    private let enabled: Bool
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant
    private var lastPlainLine: ContinuousClock.Instant
    private var succeeded = 0
    private var failed = 0

    init(total: Int, enabled: Bool) {
        self.total = total
        self.enabled = enabled && total > 1
        live = isatty(2) == 1
        started = clock.now
        lastPlainLine = started
    }

    private var finished: Int { succeeded + failed }
    var elapsed: Duration { clock.now - started }

    /// Prints a result line, taking the live line away first; `update()` draws it again.
    func print(_ line: String, toError: Bool) {
        clear()
        if toError { printError(line) } else { printOutput(line) }
    }

    /// Takes the latest counts; redraws the live line, or prints a plain one when 10 seconds
    /// have passed.
    mutating func update(succeeded: Int = 0, failed: Int = 0) {
        self.succeeded = succeeded
        self.failed = failed
        guard enabled else { return }
        if live {
            draw()
        } else if clock.now - lastPlainLine >= .seconds(10) {
            lastPlainLine = clock.now
            printError("progress: " + status)
        }
    }

    /// Removes the live line for good.
    func finish() { clear() }

    private func clear() {
        if enabled && live { writeError("\r\u{1B}[K") }
    }

    private func draw() {
        guard enabled && live else { return }
        let width = 24
        let filled = total == 0 ? width : width * finished / total
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        writeError("\r\u{1B}[K[\(bar)] " + status)
    }

    private var status: String {
        let seconds = max(elapsed.milliseconds / 1000, 0.001)
        let rate = Double(finished) / seconds
        var text = "\(finished)/\(total)  ok \(succeeded)  failed \(failed)  \(String(format1: rate))/s"
        if finished > 0, finished < total {
            text += "  ETA \(Self.clockTime(Double(total - finished) / rate))"
        }
        return text
    }

    static func clockTime(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return "\(whole / 60)m\(String(whole % 60).leftPadded(to: 2))s" }
        return "\(whole / 3600)h\(String(whole % 3600 / 60).leftPadded(to: 2))m"
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
