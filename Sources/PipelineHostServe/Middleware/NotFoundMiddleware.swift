import Hummingbird

/// Answers what no route serves, in serve's JSON rather than the router's bare 404: a GET or HEAD
/// of a path that is neither an endpoint nor an image path (`/health/x`, `/`) is not_found; any
/// other method is 405 with the methods that are served.
struct NotFoundMiddleware: RouterMiddleware {
    typealias Context = ServeContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            guard request.method == .get || request.method == .head else {
                var failure = ServeFailure(
                    .methodNotAllowed, "method_not_allowed", "\(request.method) is not served here; use GET or HEAD")
                failure.headers[.allow] = "GET, HEAD"
                throw failure
            }
            throw ServeFailure.notFound(ImagePath.Problem.notAnImagePath.message)
        }
    }
}
