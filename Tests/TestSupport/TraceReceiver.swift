import Foundation
import Glibc
import PipelineHost

/// An OTLP/HTTP trace receiver on a free loopback port (Tests/TestSupport/otlp_receiver.py, with
/// PyPI's opentelemetry-proto from the venv scripts/setup test makes): what a collector would get.
public final class TraceReceiver: Sendable {
    /// One span as it arrived, its ids in hex.
    public struct Span: Decodable, Sendable {
        public let traceID: String
        public let spanID: String
        public let parentSpanID: String
        public let name: String
        /// OTLP's SpanKind: 2 server, 3 client, 1 internal.
        public let kind: Int
        public let attributes: [String: String]
        public let links: [Link]
        /// The resource's service.name.
        public let service: String
        /// 2 is an error.
        public let statusCode: Int
    }

    /// A span's link to another span.
    public struct Link: Decodable, Sendable {
        public let traceID: String
        public let spanID: String
    }

    private struct Received: Decodable {
        let spans: [Span]
        let requests: [Request]
    }

    /// One export request: its path and content type.
    public struct Request: Decodable, Sendable {
        public let path: String
        public let contentType: String
    }

    public let port: Int
    private let process: Locked<Process?>

    public init() async throws {
        let receiver = Process()
        receiver.executableURL = URL(fileURLWithPath: Fixtures.path(".build/reference-venv/bin/python"))
        receiver.arguments = [Fixtures.path("Tests/TestSupport/otlp_receiver.py")]
        let output = Pipe()
        receiver.standardOutput = output
        receiver.standardError = FileHandle.nullDevice
        try receiver.run()
        process = Locked(receiver)
        let line = try await onOwnThread { () -> String in
            var text = ""
            while !text.contains("\n"), let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty {
                text += String(decoding: byte, as: UTF8.self)
            }
            return text
        }
        guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            receiver.terminate()
            throw ServerError(
                "the OTLP receiver did not start (scripts/setup test installs opentelemetry-proto): \(line)")
        }
        self.port = port
    }

    /// OTEL_EXPORTER_OTLP_ENDPOINT for a process that exports here.
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    /// Every span received so far.
    public func spans() async throws -> [Span] { try await received().spans }

    /// Every export request so far.
    public func requests() async throws -> [Request] { try await received().requests }

    private func received() async throws -> Received {
        let answer = try await Curl.get(endpoint + "/spans", maxTime: 60)
        return try JSONDecoder().decode(Received.self, from: Data(answer.body))
    }

    /// Waits (on events: each look is a request) until `condition` holds of the spans received;
    /// returns them either way.
    public func spans(within seconds: Double = 120, until condition: @escaping @Sendable ([Span]) -> Bool)
        async throws -> [Span]
    {
        let found = Locked<[Span]>([])
        _ = await eventually(within: seconds) {
            let spans = (try? await self.spans()) ?? []
            found.withLock { $0 = spans }
            return condition(spans)
        }
        return found.withLock { $0 }
    }

    /// Kills the receiver (Foundation's `waitUntilExit` would spin a run loop off the main thread).
    public func stop() {
        process.withLock { process in
            if let running = process { kill(running.processIdentifier, SIGKILL) }
            process = nil
        }
    }

    deinit { stop() }
}
