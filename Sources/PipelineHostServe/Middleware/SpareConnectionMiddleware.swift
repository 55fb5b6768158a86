import Hummingbird

/// On a spare connection (`ConnectionSlots`: every `--max-connections` slot was taken when it
/// opened), only the operational endpoints answer; anything else is 503 `connections_full` with
/// Retry-After, and the connection closes, so the spare ones stay free for health checks.
struct SpareConnectionMiddleware: RouterMiddleware {
    typealias Context = ServeContext
    static let operational: Set<String> = ["/health", "/ready", "/metrics"]
    let limit: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard ConnectionWatch.current?.isSpare == true, !Self.operational.contains(request.uri.path) else {
            return try await next(request, context)
        }
        var full = ServeFailure(
            .serviceUnavailable, "connections_full",
            "all \(limit) connections (--max-connections) are taken; this one is kept for /health, /ready and /metrics")
        full.retryAfter = 1
        full.headers[.connection] = "close"
        throw full
    }
}
