import Hummingbird

/// A request body in a transfer coding other than chunked is 501 (RFC 9112 §6.1), and its
/// connection closes after the answer: the decoder cannot tell where such a body ends, so
/// nothing after it on the connection can be read as a request.
struct TransferCodingMiddleware: RouterMiddleware {
    typealias Context = ServeContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let codings = request.headers[values: .transferEncoding].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard codings.isEmpty || codings == ["chunked"] else {
            var failure = ServeFailure(
                .notImplemented, "not_implemented",
                "Transfer-Encoding \(codings.joined(separator: ", ").prefix(60)) is not supported; send chunked or a Content-Length"
            )
            failure.headers[.connection] = "close"
            throw failure
        }
        return try await next(request, context)
    }
}
