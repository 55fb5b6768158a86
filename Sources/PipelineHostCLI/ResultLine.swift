import PipelineHost

/// The one-line reports `run` prints.
enum ResultLine {
    static func success(_ result: PipelineResult, path: String) -> String {
        let size = result.size.map { "\($0)" } ?? "-"
        return "ok      \(result.source) -> \(path)  \(size)  \(bytes(result.bytes.count))  \(milliseconds(result.duration))"
            + notes(result)
    }

    /// Where a result came from, when not from a full run: "  (disk cache, stale)".
    static func notes(_ result: PipelineResult) -> String {
        var notes: [String] = []
        if result.memoryHit { notes.append("memory cache") } else if result.diskHit { notes.append("disk cache") }
        if result.stale { notes.append("stale") }
        if result.coalesced { notes.append("shared") }
        return notes.isEmpty ? "" : "  (" + notes.joined(separator: ", ") + ")"
    }

    static func failure(_ source: String, _ reason: String) -> String {
        "failed  \(source): \(reason)"
    }

    static func bytes(_ count: Int) -> String {
        if count < 1024 { return "\(count) B" }
        if count < 1024 * 1024 { return String(format1: Double(count) / 1024) + " KB" }
        return String(format1: Double(count) / (1024 * 1024)) + " MB"
    }

    static func milliseconds(_ duration: Duration) -> String {
        "\(Int(duration.milliseconds.rounded())) ms"
    }
}

extension String {
    /// One decimal place, without Foundation's locale-dependent formatting.
    init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(tenths % 10)"
    }
}
