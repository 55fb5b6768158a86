import PipelineHost

/// The one-line reports `run` prints.
enum ResultLine {
    static func success(_ result: PipelineResult, path: String) -> String {
        let size = result.size.map { "\($0)" } ?? "-"
        return "ok      \(result.source) -> \(path)  \(size)  \(bytes(result.bytes.count))  \(milliseconds(result.duration))"
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
