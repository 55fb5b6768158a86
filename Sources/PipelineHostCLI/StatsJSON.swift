import PipelineHost

/// The `--stats` object: the pipeline's figures plus what the run itself saw, on one line.
enum StatsJSON {
    static func render(_ stats: PipelineStats, run summary: ResultWriter.Summary) -> String {
        var fields = stats.fields.map { ($0.name, number($0.value)) }
        fields += [
            ("not_started", number(Double(summary.notStarted))),
            ("written", number(Double(summary.succeeded))),
            ("elapsed_ms", number((summary.elapsed.milliseconds * 10).rounded() / 10)),
            ("interrupted", summary.interrupted ? "true" : "false"),
        ]
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// Whole numbers without a decimal point: the canonical number text keys use too.
    private static func number(_ value: Double) -> String {
        ParameterValue.number(value).description
    }
}
