import Foundation
import TestSupport
import Testing

/// serve's traces as a collector gets them: the release binary exporting over OTLP/HTTP to a
/// real receiver that decodes the protobuf (opentelemetry-proto), in front of the loopback origin.
@Suite(.serialized, .needs(.pixels, .network, .process), .loopbackOrigin)
struct ServeTracingTests {
    static let profile = Fixtures.cachedThumbProfile

    let origin = LoopbackServer.fixture
    let directory: TemporaryDirectory
    let profileFile: String

    init() throws {
        directory = try TemporaryDirectory()
        profileFile = try directory.write("serve.lua", Array(Self.profile.utf8))
    }

    /// Exports to `receiver` every 100 ms, unless `environment` says otherwise.
    func start(
        _ receiver: TraceReceiver, _ arguments: [String] = [], environment: [String: String] = [:],
        cache: String = "cache"
    ) async throws -> ServeProcess {
        let service = try await ServeProcess(
            profileFile: profileFile, ["--allow-unsigned", "--cache-dir", directory.file(cache)] + arguments,
            environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"]
                .merging(environment) { $1 })
        try Self.requireExporter(service.running.outputSoFar)
        return service
    }

    /// The binary under test must have the exporter: the release build scripts/test makes.
    static func requireExporter(_ output: String) throws {
        try #require(
            !output.contains("has no trace exporter"),
            "\(CLIProcess.executable) has no exporter: set PIPELINEHOST_BIN to a build with --traits OTLPExporter, as scripts/test does"
        )
    }

    func url(_ service: ServeProcess, _ path: String) -> String {
        service.baseURL + "/unsafe/thumb/" + base64url(origin.url(path))
    }

    @Test func aRequestContinuesTheCallersTraceThroughStagesTiersAndTheOrigin() async throws {
        origin.route("/a.jpg", .ok(Fixtures.sample))
        let receiver = try await TraceReceiver()
        let service = try await start(receiver, environment: ["OTEL_SERVICE_NAME": "thumbs-test"])
        #expect(
            service.running.outputSoFar.contains(
                "traces to \(receiver.endpoint)/v1/traces (http/protobuf, service thumbs-test, sampler parentbased_always_on)"
            ),
            "serve says where its traces go")
        let trace = TraceID.random(), caller = SpanID.random()
        let answer = try await Curl.get(
            url(service, "/a.jpg"), headers: ["traceparent: 00-\(trace)-\(caller)-01", "tracestate: vendor=abc"])
        #expect(answer.status == 200)
        let spans = try await receiver.spans { $0.contains { $0.traceID == trace && $0.kind == 2 } }
        let mine = spans.filter { $0.traceID == trace }
        let server = try #require(mine.first { $0.kind == 2 }, "\(spans.map(\.name))")
        #expect(server.parentSpanID == caller, "the caller's span is the server span's parent")
        #expect(server.name == "GET /{signature}/{profile}/{source}")
        #expect(server.attributes["pipelinehost.profile"] == "thumb")
        #expect(server.attributes["http.response.status_code"] == "200")
        #expect(server.service == "thumbs-test")
        #expect(!server.attributes.values.contains { $0.contains(base64url(origin.url("/a.jpg"))) }, "no raw path")
        // The stages that ran, and the tiers looked in, all in the caller's trace.
        let names = Set(mine.map(\.name))
        for stage in ["fetch", "decode", "downsample", "encode", "pipeline.image", "work fetch", "work encode"] {
            #expect(names.contains(stage), "\(stage) in \(names.sorted())")
        }
        #expect(mine.contains { $0.name == "cache disk" && $0.attributes["pipelinehost.cache.lookup"] == "miss" })
        #expect(mine.contains { $0.name == "cache memory" && $0.attributes["pipelinehost.cache.lookup"] == "miss" })
        // The origin got the fetch span as its parent, with the caller's trace state.
        let fetch = try #require(mine.first { $0.name == "fetch" })
        let sent = try #require(origin.requestHeaders("/a.jpg").first)
        #expect(sent["traceparent"] == "00-\(trace)-\(fetch.spanID)-01", "\(sent)")
        #expect(sent["tracestate"] == "vendor=abc")

        // Again: a memory hit, in a new trace of its own.
        let second = TraceID.random()
        #expect(
            try await Curl.get(url(service, "/a.jpg"), headers: ["traceparent: 00-\(second)-\(caller)-01"]).status
                == 200)
        let again = try await receiver.spans { $0.contains { $0.traceID == second && $0.kind == 2 } }
        #expect(
            again.contains {
                $0.traceID == second && $0.name == "cache memory" && $0.attributes["pipelinehost.cache.lookup"] == "hit"
            })
        #expect(again.first { $0.traceID == second && $0.kind == 2 }?.attributes["pipelinehost.cache"] == "memory")
        #expect(!again.contains { $0.traceID == second && $0.name == "fetch" })
        #expect(
            try await receiver.requests().allSatisfy {
                $0.path == "/v1/traces" && $0.contentType == "application/x-protobuf"
            })
        let outcome = try await service.stop()
        // Log lines written inside a request carry its trace id and the active span's id: the
        // access log line, written inside the server span, carries the server span's.
        #expect(
            outcome.stderr.split(separator: "\n").contains {
                $0.contains("trace_id=\(trace)") && $0.contains("span_id=\(server.spanID)") && $0.contains(" 200 ")
            }, "\(outcome.stderr)")
    }

    @Test func aTwinRequestLinksItsWaitToTheWorkItJoined() async throws {
        origin.route("/twin.jpg", .held(gate: "go", .ok(Fixtures.sample)))
        let receiver = try await TraceReceiver()
        let service = try await start(receiver)
        let (first, second) = (TraceID.random(), TraceID.random())
        async let leader = Curl.get(
            url(service, "/twin.jpg"), headers: ["traceparent: 00-\(first)-\(SpanID.random())-01"])
        #expect(await eventually { origin.requestCount("/twin.jpg") == 1 })
        async let twin = Curl.get(
            url(service, "/twin.jpg"), headers: ["traceparent: 00-\(second)-\(SpanID.random())-01"])
        // Both wait for their final step now: the twin has joined the leader's work.
        #expect(await service.waitUntilWaiting(2))
        origin.open("go")
        #expect(try await leader.status == 200)
        #expect(try await twin.status == 200)
        #expect(origin.requestCount("/twin.jpg") == 1)
        let spans = try await receiver.spans {
            $0.contains { $0.traceID == first && $0.kind == 2 } && $0.contains { $0.traceID == second && $0.kind == 2 }
        }
        let join = try #require(
            spans.first { $0.traceID == second && $0.name.hasPrefix("join ") },
            "\(spans.map { ($0.traceID == first ? "1 " : $0.traceID == second ? "2 " : "? ") + $0.name })")
        let link = try #require(join.links.first)
        #expect(link.traceID == first, "the link leads into the leader's trace")
        let work = try #require(spans.first { $0.spanID == link.spanID })
        #expect(work.name == "work " + join.name.dropFirst("join ".count))
        #expect(work.attributes["pipelinehost.waiters"] == "2", "\(work.attributes)")
        #expect(!spans.contains { $0.traceID == second && $0.name == "fetch" }, "the twin fetched nothing")
        _ = try await service.stop()
    }

    @Test func aTransferThatWaitedForASlotShowsItsWaitInTheQueue() async throws {
        origin.route("/first.jpg", .held(gate: "slot", .ok(Fixtures.sample)))
        origin.route("/second.jpg", .ok(Fixtures.sample))
        let receiver = try await TraceReceiver()
        // One transfer at a time to the origin: the second source's fetch queues behind the first.
        let service = try await start(receiver, ["--per-host", "1"])
        async let first = Curl.get(url(service, "/first.jpg"))
        #expect(await eventually { origin.requestCount("/first.jpg") == 1 })
        let trace = TraceID.random()
        async let second = Curl.get(
            url(service, "/second.jpg"), headers: ["traceparent: 00-\(trace)-\(SpanID.random())-01"])
        #expect(
            await eventually {
                let metrics = (try? await Curl.get(service.baseURL + "/metrics").text) ?? ""
                return metrics.split(separator: "\n").contains {
                    $0 == #"pipelinehost_queued{lane="transfers"} 1"#
                        || $0 == #"pipelinehost_queued{lane="transfers"} 1.0"#
                }
            })
        origin.open("slot")
        #expect(try await first.status == 200)
        #expect(try await second.status == 200)
        let spans = try await receiver.spans { $0.contains { $0.traceID == trace && $0.kind == 2 } }
        let mine = spans.filter { $0.traceID == trace }
        let queue = try #require(mine.first { $0.name == "queue transfers" }, "\(mine.map(\.name))")
        let work = try #require(mine.first { $0.name == "work fetch" })
        #expect(queue.parentSpanID == work.spanID, "the wait is the fetch work's")
        let fetch = try #require(mine.first { $0.name == "fetch" })
        #expect(fetch.parentSpanID == work.spanID)
        #expect(!spans.contains { $0.traceID != trace && $0.name == "queue transfers" }, "the first never waited")
        _ = try await service.stop()
    }

    @Test func spansStillQueuedAreSentOnSIGTERMsDrain() async throws {
        origin.route("/drain.jpg", .ok(Fixtures.sample))
        let receiver = try await TraceReceiver()
        // A 10-minute batch delay: only the flush at shutdown can send these spans.
        let service = try await start(receiver, environment: ["OTEL_BSP_SCHEDULE_DELAY": "600000"])
        let trace = TraceID.random()
        #expect(
            try await Curl.get(url(service, "/drain.jpg"), headers: ["traceparent: 00-\(trace)-\(SpanID.random())-01"])
                .status == 200)
        #expect(try await receiver.spans().isEmpty)
        let outcome = try await service.stop()
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let spans = try await receiver.spans()
        #expect(spans.contains { $0.traceID == trace && $0.kind == 2 }, "\(spans.map(\.name))")
        #expect(spans.contains { $0.traceID == trace && $0.name == "encode" })
    }

    @Test func aSamplerThatSamplesNothingExportsNothing() async throws {
        origin.route("/off.jpg", .ok(Fixtures.sample))
        let receiver = try await TraceReceiver()
        let service = try await start(receiver, environment: ["OTEL_TRACES_SAMPLER": "always_off"])
        #expect(try await Curl.get(url(service, "/off.jpg")).status == 200)
        _ = try await service.stop()
        #expect(try await receiver.spans().isEmpty)
    }

    /// A collector behind a URL with a query (a token, say) gets the spans at its path plus
    /// `v1/traces`, the query kept after it; the token is shown redacted.
    @Test func anEndpointWithAQueryGetsTheTracesPathBeforeTheQuery() async throws {
        origin.route("/q.jpg", .ok(Fixtures.sample))
        let receiver = try await TraceReceiver()
        let service = try await start(
            receiver, environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint + "/?token=T0KEN7"])
        #expect(service.running.outputSoFar.contains("traces to \(receiver.endpoint)/v1/traces?token=REDACTED"))
        #expect(try await Curl.get(url(service, "/q.jpg")).status == 200)
        _ = try await receiver.spans { $0.contains { $0.kind == 2 } }
        let paths = try await receiver.requests().map(\.path)
        #expect(!paths.isEmpty && paths.allSatisfy { $0 == "/v1/traces?token=T0KEN7" }, "\(paths)")
        _ = try await service.stop()
    }
}

/// W3C ids for a caller's traceparent.
enum TraceID {
    static func random() -> String { hex(16) }
}

enum SpanID {
    static func random() -> String { hex(8) }
}

private func hex(_ bytes: Int) -> String {
    (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 1...255)) }.joined()
}
