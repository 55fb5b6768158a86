import HTTPTypes
import Hummingbird
import HummingbirdTesting
import TestSupport

@testable import PipelineHostServe

/// A serve service in this process on a real socket, and a client on it whose read timeout is
/// the serve tests' request limit (`ServeTestTimeouts`): Hummingbird's `.test(.live)` fixes its
/// client's at 20 s, which a request on a busy machine can pass (five of these tests failed so,
/// beside every other suite and two busy loops).
struct LiveServe {
    struct Response: Sendable {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let body: ByteBuffer
    }

    struct Client: Sendable {
        let client: TestClient
        let port: Int?

        func execute(uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:]) async throws -> Response {
            var headers = headers
            headers[.connection] = "keep-alive"
            let response = try await client.execute(
                TestClient.Request(uri, method: method, authority: "localhost", headers: headers))
            return Response(status: response.status, headers: response.headers, body: response.body ?? ByteBuffer())
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
            let client = TestClient(
                host: "localhost", port: port,
                configuration: .init(timeout: .seconds(ServeTestTimeouts.requestSeconds)))
            client.connect()
            defer { group.cancelAll() }
            do {
                let value = try await test(Client(client: client, port: port))
                try await client.shutdown()
                return value
            } catch {
                try? await client.shutdown()
                throw error
            }
        }
    }
}
