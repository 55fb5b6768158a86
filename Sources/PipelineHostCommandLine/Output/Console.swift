import ArgumentParser
import Glibc
import PipelineHost

// The one way the command line writes to the terminal. Every line may carry text from outside
// (a source, a server's message, a profile's name), so control characters are escaped and it
// cannot drive the terminal; nothing is buffered by stdio, so results on standard output
// interleave correctly with the progress line on standard error; a partial write is finished.

/// Writes a line to standard output; a closed pipe is noticed (`BrokenPipe`).
func printOutput(_ line: String, terminator: String = "\n") {
    write(fd: 1, Redactor.escapingControls(line, keepingLines: true) + terminator)
}

/// Writes a line to standard error.
func printError(_ line: String) {
    write(fd: 2, Redactor.escapingControls(line, keepingLines: true) + "\n")
}

/// Writes raw text to standard error: the progress display's own control sequences.
func writeError(_ text: String) {
    write(fd: 2, text)
}

/// Prints `error: message` to stderr and gives the usage exit code (2) to throw: a usage or
/// profile error is one line, then exit. For a flag's value checked in `validate()`, throw
/// ArgumentParser's `ValidationError`, which ends the same way (`PipelineHostCommand.main`).
func usageError(_ message: String) -> ExitCode {
    printError("error: " + message)
    return .usage
}

private func write(fd: Int32, _ text: String) {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n < 0 && errno == EPIPE && fd == 1 { BrokenPipe.noticed() }
        if n <= 0 { return }
        offset += n
    }
}
