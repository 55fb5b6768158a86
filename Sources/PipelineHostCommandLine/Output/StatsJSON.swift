import PipelineHost

/// The `--stats` object: the pipeline's figures plus what the run itself saw, on one line.
enum StatsJSON {
    /// `tagged` starts the object with "type":"stats", for --json's stream of typed lines.
    static func render(_ stats: PipelineStats, run summary: ResultWriter.Summary, tagged: Bool = false) -> String {
        var fields = stats.fields.map { ($0.name, number($0.value)) }
        fields += [
            ("not_started", number(Double(summary.notStarted))),
            ("written", number(Double(summary.succeeded))),
            ("elapsed_ms", number((summary.elapsed.milliseconds * 10).rounded() / 10)),
            ("interrupted", summary.interrupted ? "true" : "false"),
        ]
        return "{" + (tagged ? #""type":"stats","# : "") + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",")
            + "}"
    }

    /// Whole numbers without a decimal point: the canonical number text keys use too.
    private static func number(_ value: Double) -> String {
        ParameterValue.number(value).description
    }
}
