import PipelineHost

/// The one-line reports `run` prints.
enum ResultLine {
    static func success(_ result: PipelineResult, path: String) -> String {
        let size = result.size.map { "\($0)" } ?? "-"
        return
            "ok      \(result.source) -> \(path)  \(size)  \(bytes(result.bytes.count))  \(milliseconds(result.duration))"
            + notes(result)
    }

    /// Where a result came from, when not from a full run: "  (disk cache, stale)".
    static func notes(_ result: PipelineResult) -> String {
        var notes: [String] = []
        if result.memoryHit {
            notes.append("memory cache")
        } else if result.diskHit {
            notes.append("disk cache")
        } else if result.sharedHit {
            notes.append(result.sharedTier == "store" ? "object store" : "shared cache")
        }
        if result.stale { notes.append("stale") }
        if result.coalesced { notes.append("shared") }
        return notes.isEmpty ? "" : "  (" + notes.joined(separator: ", ") + ")"
    }

    /// Where one result's time went, stage by stage, in milliseconds; time spent queued for a
    /// slot is shown as "+N queued". Shared stages show the shared work's times.
    static func trace(_ result: PipelineResult) -> String {
        let stages = result.timings.map { timing in
            let queued =
                timing.waited.milliseconds >= 0.05 ? " (+\(String(format1: timing.waited.milliseconds)) queued)" : ""
            return "\(timing.stage) \(String(format1: timing.duration.milliseconds))\(queued)"
        }
        return "trace   \(result.source) [\(result.request.profile)]  " + stages.joined(separator: " | ")
            + "  = \(String(format1: result.duration.milliseconds)) ms" + notes(result)
    }

    static func failure(_ source: String, _ reason: String) -> String {
        "failed  \(source): \(reason)"
    }

    static func bytes(_ count: Int) -> String { ByteText.bytes(count) }

    static func milliseconds(_ duration: Duration) -> String {
        "\(Int(duration.milliseconds.rounded())) ms"
    }
}

extension String {
    /// One decimal place, without Foundation's locale-dependent formatting.
    init(format1 value: Double) { self = ByteText.tenths(value) }
}
