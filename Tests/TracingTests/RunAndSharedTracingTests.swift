import Foundation
import TestSupport
import Testing

/// `run`'s traces, and a wait for another node's work through a Redis lease, as a collector
/// gets them.
@Suite(.serialized, .needs(.pixels, .network, .process, .redis), .loopbackOrigin)
struct RunAndSharedTracingTests {
    let origin = LoopbackServer.fixture
    let directory: TemporaryDirectory
    let profileFile: String

    init() throws {
        directory = try TemporaryDirectory()
        profileFile = try directory.write("thumb.lua", Array(Fixtures.cachedThumbProfile.utf8))
    }

    @Test func runExportsOneTracePerSourceWithItsFailureMarked() async throws {
        origin.route("/ok.jpg", .ok(Fixtures.sample))
        origin.route("/gone.jpg", .status(404))
        let receiver = try await TraceReceiver()
        let outcome = try await CLIProcess.run(
            [
                "run", profileFile, origin.url("/ok.jpg"), origin.url("/gone.jpg?token=s3cret"), "--no-progress",
                "--cache-dir", directory.file("cache"), "--output-dir", directory.file("out"),
            ],
            environment: ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": receiver.endpoint + "/v1/traces"])
        try ServeTracingTests.requireExporter(outcome.stderr)
        #expect(outcome.status == 1, "one source failed: \(outcome.stderr)")
        // Exported before the process exits: the batch's end flushes them.
        let roots = try await receiver.spans().filter { $0.name == "pipeline.image" }
        #expect(roots.count == 2, "\(roots)")
        #expect(roots.allSatisfy { $0.parentSpanID.isEmpty && $0.service == "pipelinehost" })
        #expect(Set(roots.map(\.traceID)).count == 2, "a trace per source")
        let failed = try #require(roots.first { $0.statusCode == 2 })
        #expect(failed.attributes["pipelinehost.error"] == "http_status")
        #expect(failed.attributes["pipelinehost.source"]?.contains("s3cret") == false, "\(failed.attributes)")
        #expect(roots.first { $0.statusCode != 2 }?.attributes["pipelinehost.cache"] == "none")
    }

    @Test func aBadOTELVariableIsAOneLineUsageError() async throws {
        for (name, value, says) in [
            ("OTEL_TRACES_SAMPLER_ARG", "1.5", "OTEL_TRACES_SAMPLER_ARG=1.5: a ratio from 0 to 1"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "exports over HTTP only"),
        ] {
            let outcome = try await CLIProcess.run(
                ["run", profileFile, origin.url("/x.jpg"), "--no-progress", "--output-dir", directory.file("out")],
                environment: [
                    "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_SAMPLER": "traceidratio",
                    name: value,
                ])
            #expect(outcome.status == 2)
            #expect(outcome.stderr.contains(says), "\(outcome.stderr)")
            #expect(outcome.stderr.split(separator: "\n").count == 1, "\(outcome.stderr)")
        }
        #expect(origin.requestCount("/x.jpg") == 0)
    }

    @Test func aWaitForAnotherNodesLeaseLinksToThatNodesWork() async throws {
        origin.route("/shared.jpg", .held(gate: "go", .ok(Fixtures.sample)))
        let redis = try await RedisServer()
        defer { Task { await redis.stop() } }
        let receiver = try await TraceReceiver()
        var nodes: [ServeProcess] = []
        for name in ["a", "b"] {
            nodes.append(
                try await ServeProcess(
                    profileFile: profileFile,
                    [
                        "--allow-unsigned", "--shared-cache", redis.url, "--shared-lease", "60", "--shared-wait", "90",
                        "--request-timeout", "300",
                        "--cache-dir", directory.file("cache-\(name)"), "--no-access-log",
                    ],
                    environment: [
                        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100",
                        "OTEL_SERVICE_NAME": "node-\(name)",
                    ]))
        }
        for node in nodes { try ServeTracingTests.requireExporter(node.running.outputSoFar) }
        let path = "/unsafe/thumb/" + base64url(origin.url("/shared.jpg"))
        let (first, second) = (TraceID.random(), TraceID.random())
        let nodeA = nodes[0], nodeB = nodes[1]
        async let leader = Curl.get(nodeA.baseURL + path, headers: ["traceparent: 00-\(first)-\(SpanID.random())-01"])
        #expect(await eventually { origin.requestCount("/shared.jpg") == 1 })
        async let waiter = Curl.get(nodeB.baseURL + path, headers: ["traceparent: 00-\(second)-\(SpanID.random())-01"])
        #expect(
            await eventually {
                (try? await Curl.get(nodeB.baseURL + "/metrics").text)?.contains("pipelinehost_leases_waited_total 1\n")
                    == true
            })
        origin.open("go")
        #expect(try await leader.status == 200)
        #expect(try await waiter.status == 200)
        #expect(origin.requestCount("/shared.jpg") == 1)
        let spans = try await receiver.spans {
            $0.contains { $0.traceID == first && $0.kind == 2 } && $0.contains { $0.traceID == second && $0.kind == 2 }
        }
        let wait = try #require(spans.first { $0.traceID == second && $0.name == "lease wait" }, "\(spans.map(\.name))")
        #expect(wait.service == "node-b")
        #expect(wait.attributes["pipelinehost.lease.outcome"] == "entry")
        let link = try #require(wait.links.first)
        #expect(link.traceID == first)
        let work = try #require(spans.first { $0.spanID == link.spanID }, "the linked span arrived from node a")
        #expect(work.service == "node-a" && work.name.hasPrefix("work "), "\(work)")
        #expect(
            spans.contains {
                $0.traceID == second && $0.name == "cache shared" && $0.attributes["pipelinehost.cache.lookup"] == "hit"
            })
        for node in nodes { _ = try await node.stop() }
    }
}
