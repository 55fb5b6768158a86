import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOPosix
import TestSupport

@testable import PipelineHostServe

/// A serve service in this process on a real socket, and an HTTP/1.1 client for it: NIO's own
/// codec, a connection per request (so requests can run at once), and the serve tests' request
/// limit (`ServeTestTimeouts`). HummingbirdTesting's clients were used before; that product
/// brings AsyncHTTPClient, HTTP/2 and a second BoringSSL, which were three minutes of the test
/// build and three more of the ThreadSanitizer build.
struct LiveServe {
    struct Response: Sendable {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let body: ByteBuffer
    }

    struct Client: Sendable {
        let port: Int

        func execute(
            uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil
        ) async throws -> Response {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "localhost", port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                            wrappingChannelSynchronously: channel)
                    }
                }
            return try await withThrowingTaskGroup(of: Response?.self) { group in
                group.addTask {
                    try await channel.executeThenClose { inbound, outbound in
                        try await outbound.write(.head(Self.head(uri, method, headers, body)))
                        if let body { try await outbound.write(.body(.byteBuffer(body))) }
                        try await outbound.write(.end(nil))
                        return try await Self.response(from: inbound)
                    }
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(ServeTestTimeouts.requestSeconds))
                    return nil
                }
                defer { group.cancelAll() }
                guard let response = try await group.next() ?? nil else {
                    try? await channel.channel.close()
                    throw LiveServeError.noAnswer(uri, "within \(ServeTestTimeouts.requestSeconds) s")
                }
                return response
            }
        }

        /// `execute`, then `check` on the answer.
        @discardableResult
        func execute<Value>(
            uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil,
            _ check: (Response) async throws -> Value
        ) async throws -> Value {
            try await check(execute(uri: uri, method: method, headers: headers, body: body))
        }

        private static func head(_ uri: String, _ method: HTTPRequest.Method, _ fields: HTTPFields, _ body: ByteBuffer?)
            -> HTTPRequestHead
        {
            var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method.rawValue), uri: uri)
            head.headers.add(name: "Host", value: "localhost")
            for field in fields { head.headers.add(name: field.name.rawName, value: field.value) }
            if let body { head.headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes)) }
            return head
        }

        private static func response(
            from inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>
        ) async throws -> Response {
            var head: HTTPResponseHead?
            var body = ByteBuffer()
            for try await part in inbound {
                switch part {
                case .head(let received): head = received
                case .body(let bytes): body.writeImmutableBuffer(bytes)
                case .end:
                    guard let head else { break }
                    var fields = HTTPFields()
                    for (name, value) in head.headers {
                        if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
                    }
                    return Response(
                        status: .init(code: Int(head.status.code), reasonPhrase: head.status.reasonPhrase),
                        headers: fields, body: body)
                }
            }
            throw LiveServeError.noAnswer("the request", "the connection closed before the answer ended")
        }
    }

    enum LiveServeError: Error, CustomStringConvertible {
        case noAnswer(String, String)
        var description: String {
            switch self {
            case .noAnswer(let uri, let why): "no answer to \(uri): \(why)"
            }
        }
    }

    /// Serves `service` until `test` returns, then stops it.
    static func run<Value: Sendable>(
        _ service: ServeApplication, _ test: @Sendable (Client) async throws -> Value
    ) async throws -> Value {
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let application = await service.application { listening.yield($0) }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await application.runService(gracefulShutdownSignals: []) }
            var waiting = ports.makeAsyncIterator()
            guard let port = await waiting.next() else { throw CancellationError() }
            defer { group.cancelAll() }
            return try await test(Client(port: port))
        }
    }
}
