import PipelineHost

/// The standard OpenTelemetry environment, as far as pipelinehost reads it: whether to export
/// traces, and every value checked before an exporter starts. The exporter (swift-otel) reads
/// the same variables itself, and more (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES);
/// this only decides on and range-checks what it would otherwise take or ignore silently.
public struct TraceSettings: Sendable, Equatable {
    /// Where spans go: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, or OTEL_EXPORTER_OTLP_ENDPOINT
    /// with `/v1/traces` added to its path (`tracesPath(on:)`). The exporter is given this URL.
    public var endpoint: String
    /// `http/protobuf` (the default) or `http/json`.
    public var exportProtocol: String
    /// OTEL_SERVICE_NAME, `pipelinehost` by default.
    public var serviceName: String
    /// OTEL_TRACES_SAMPLER, `parentbased_always_on` by default.
    public var sampler: String
    /// OTEL_TRACES_SAMPLER_ARG, the ratio of a ratio sampler (0 to 1).
    public var samplerRatio: Double?

    static let samplers: Set<String> = [
        "always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off",
        "parentbased_traceidratio",
    ]
    /// Whole-number variables the batch processor and exporter read, and the range each may take.
    static let counts: [(name: String, range: ClosedRange<Int>)] = [
        ("OTEL_BSP_SCHEDULE_DELAY", 1...3_600_000), ("OTEL_BSP_EXPORT_TIMEOUT", 1...3_600_000),
        ("OTEL_BSP_MAX_QUEUE_SIZE", 1...1_000_000), ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 1...1_000_000),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", 1...3_600_000), ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", 1...3_600_000),
    ]

    /// The settings `environment` asks for; nil when it asks for no export (no endpoint,
    /// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none). A value that does not read is an
    /// error naming the variable, with no secret in it.
    public static func from(environment: [String: String]) throws(TraceSettingsError) -> TraceSettings? {
        func value(_ name: String) -> String? {
            environment[name].flatMap { $0.allSatisfy { $0 == " " } ? nil : $0 }
        }
        if value("OTEL_SDK_DISABLED")?.lowercased() == "true" { return nil }
        if let exporter = value("OTEL_TRACES_EXPORTER") {
            if exporter == "none" { return nil }
            guard exporter == "otlp" else {
                throw TraceSettingsError("OTEL_TRACES_EXPORTER=\(exporter): this build exports otlp only (or none)")
            }
        }
        let endpoint: String
        if let traces = value("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            endpoint = try checkedEndpoint(traces, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        } else if let shared = value("OTEL_EXPORTER_OTLP_ENDPOINT") {
            endpoint = Self.tracesPath(on: try checkedEndpoint(shared, "OTEL_EXPORTER_OTLP_ENDPOINT"))
        } else {
            return nil
        }
        let exportProtocol =
            value("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? value("OTEL_EXPORTER_OTLP_PROTOCOL") ?? "http/protobuf"
        guard exportProtocol == "http/protobuf" || exportProtocol == "http/json" else {
            throw TraceSettingsError(
                "OTEL_EXPORTER_OTLP_PROTOCOL=\(exportProtocol): this build exports over HTTP only (http/protobuf or http/json)"
            )
        }
        let sampler = value("OTEL_TRACES_SAMPLER") ?? "parentbased_always_on"
        guard samplers.contains(sampler) else {
            throw TraceSettingsError(
                "OTEL_TRACES_SAMPLER=\(sampler): use one of \(samplers.sorted().joined(separator: ", "))")
        }
        var ratio: Double?
        if let argument = value("OTEL_TRACES_SAMPLER_ARG"), sampler.hasSuffix("traceidratio") {
            guard let number = Double(argument), number.isFinite, (0...1).contains(number) else {
                throw TraceSettingsError("OTEL_TRACES_SAMPLER_ARG=\(argument): a ratio from 0 to 1")
            }
            ratio = number
        }
        for (name, range) in counts {
            guard let text = value(name) else { continue }
            guard let number = Int(text), range.contains(number) else {
                throw TraceSettingsError(
                    "\(name)=\(text): a whole number of \(name.hasSuffix("SIZE") ? "spans" : "milliseconds") from \(range.lowerBound) to \(range.upperBound)"
                )
            }
        }
        let serviceName = value("OTEL_SERVICE_NAME") ?? "pipelinehost"
        guard serviceName.count <= 255, serviceName.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else {
            throw TraceSettingsError("OTEL_SERVICE_NAME: at most 255 printable characters")
        }
        return TraceSettings(
            endpoint: endpoint, exportProtocol: exportProtocol, serviceName: serviceName, sampler: sampler,
            samplerRatio: ratio)
    }

    /// An http(s) URL with a host; user information in it is never echoed.
    /// `base` with `v1/traces` added to its path, before any query or fragment: the spec's
    /// "base URL ending in a slash", for a URL that carries a query (`http://h/?token=X` sends to
    /// `http://h/v1/traces?token=X`, not to `/?token=X/v1/traces`).
    static func tracesPath(on base: String) -> String {
        let cut = base.firstIndex { $0 == "?" || $0 == "#" } ?? base.endIndex
        let path = base[..<cut]
        return path + (path.hasSuffix("/") ? "" : "/") + "v1/traces" + base[cut...]
    }

    private static func checkedEndpoint(_ text: String, _ name: String) throws(TraceSettingsError) -> String {
        let location = SourceLocation(text)
        let shown = Redactor.redact(text)
        guard let scheme = location.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw TraceSettingsError("\(name)=\(shown): an http:// or https:// URL")
        }
        guard let host = location.hostAndPort, !host.isEmpty else {
            throw TraceSettingsError("\(name)=\(shown): the URL has no host")
        }
        guard text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw TraceSettingsError("\(name)=\(shown): spaces or control characters in the URL")
        }
        return text
    }
}

/// An OTEL_* variable that does not read: one line, the variable named.
public struct TraceSettingsError: Error, CustomStringConvertible, Sendable {
    /// The line: the variable, its value (redacted) and what it must be.
    public let description: String
    init(_ description: String) { self.description = description }
}
