import PipelineHostCommandLine
import Testing

/// The OTEL_* environment as `run` and `serve` read it, before any exporter starts: values, with
/// no I/O.
@Suite struct TraceSettingsTests {
    @Test func noEndpointMeansNoExport() throws {
        #expect(try TraceSettings.from(environment: [:]) == nil)
        #expect(
            try TraceSettings.from(environment: ["OTEL_SERVICE_NAME": "x", "OTEL_TRACES_SAMPLER": "always_on"]) == nil)
        let endpoint = ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"]
        #expect(try TraceSettings.from(environment: endpoint.merging(["OTEL_SDK_DISABLED": "true"]) { $1 }) == nil)
        #expect(try TraceSettings.from(environment: endpoint.merging(["OTEL_TRACES_EXPORTER": "none"]) { $1 }) == nil)
    }

    @Test func theSharedEndpointGetsTheTracesPathAndTheSignalsOwnIsTakenAsIs() throws {
        let shared = try #require(
            try TraceSettings.from(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"]))
        #expect(shared.endpoint == "http://collector:4318/v1/traces")
        #expect(shared.serviceName == "pipelinehost")
        #expect(shared.exportProtocol == "http/protobuf")
        #expect(shared.sampler == "parentbased_always_on")
        let own = try #require(
            try TraceSettings.from(environment: [
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://b/otlp",
                "OTEL_SERVICE_NAME": "thumbs", "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
                "OTEL_TRACES_SAMPLER_ARG": "0.25",
            ]))
        #expect(own.endpoint == "https://b/otlp")
        // The traces path goes on the URL's path, before a query or fragment, never after it.
        for (base, traces) in [
            ("http://h/?token=X", "http://h/v1/traces?token=X"), ("http://h?token=X", "http://h/v1/traces?token=X"),
            ("https://h/otlp/?k=1&j=2#f", "https://h/otlp/v1/traces?k=1&j=2#f"),
            ("http://h/otlp", "http://h/otlp/v1/traces"),
        ] {
            let settings = try TraceSettings.from(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": base])
            #expect(settings?.endpoint == traces, "\(base)")
        }
        #expect(own.serviceName == "thumbs")
        #expect(own.samplerRatio == 0.25)
    }

    @Test(arguments: [
        ("OTEL_TRACES_SAMPLER_ARG", "-0.1", "a ratio from 0 to 1"),
        ("OTEL_TRACES_SAMPLER_ARG", "nan", "a ratio from 0 to 1"),
        ("OTEL_TRACES_SAMPLER", "jaeger_remote", "use one of always_off"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "over HTTP only"),
        ("OTEL_BSP_SCHEDULE_DELAY", "0", "from 1 to 3600000"),
        ("OTEL_BSP_MAX_QUEUE_SIZE", "99999999999999999999", "spans from 1 to 1000000"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "ten", "milliseconds"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318", "an http:// or https:// URL"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http:///v1", "no host"),
        ("OTEL_TRACES_EXPORTER", "zipkin", "otlp only"),
    ])
    func aValueThatDoesNotReadNamesItsVariable(name: String, value: String, says: String) {
        var environment = [
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_TRACES_SAMPLER": "traceidratio",
        ]
        environment[name] = value
        #expect {
            try TraceSettings.from(environment: environment)
        } throws: { error in
            let text = "\(error)"
            return text.hasPrefix(name) && text.contains(says) && !text.contains("\n")
        }
    }

    @Test func anEndpointsCredentialsAreNeverEchoed() {
        #expect {
            try TraceSettings.from(environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://user:hunter2@collector"])
        } throws: { error in
            "\(error)".contains("OTEL_EXPORTER_OTLP_ENDPOINT") && !"\(error)".contains("hunter2")
        }
    }
}
