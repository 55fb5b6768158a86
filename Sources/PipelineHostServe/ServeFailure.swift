import Hummingbird
import PipelineHost

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An answer that is not an image: a status and a JSON body `{kind, reason, ...}`. The source
/// in it is always redacted; the failed layer's details (an upstream status, say) come along.
struct ServeFailure: Error, Sendable {
    let status: HTTPResponse.Status
    let kind: String
    let reason: String
    var source: String?
    var details: [String: ErrorField] = [:]
    /// Seconds, for 503s that tell the client when to come back.
    var retryAfter: Int?
    /// Headers the answer carries besides its own (Allow, for a 405).
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ kind: String, _ reason: String, source: String? = nil) {
        self.status = status
        self.kind = kind
        self.reason = reason
        self.source = source
    }

    static func forbidden(_ reason: String) -> ServeFailure { ServeFailure(.forbidden, "forbidden", reason) }
    static func notFound(_ reason: String) -> ServeFailure { ServeFailure(.notFound, "not_found", reason) }

    /// The status table of docs/SERVE.md: what each kind of pipeline failure answers.
    init(_ error: PipelineError) {
        let upstream = error.upstreamStatus
        let status: HTTPResponse.Status =
            switch error.kind {
            case .httpStatus where upstream == 404 || upstream == 410: .notFound
            case .httpStatus, .transport: .badGateway
            case .timeout, .notCached: .gatewayTimeout
            case .notAnImage, .tooLarge, .unsupportedFormat, .pixelLimit, .decodeFailed, .invalidSource:
                .unprocessableContent
            case .blocked: .forbidden
            case .cancelled, .overloaded: .serviceUnavailable
            default: .internalServerError
            }
        // A source that is not there is not_found, as for an unknown profile and as a fallback's
        // `on` calls it; the origin's own status stays in upstream_status.
        let kind = status == .notFound ? "not_found" : error.kind.name
        self.init(status, kind, error.reason, source: error.source)
        details = error.details?.jsonFields ?? [:]
        if let upstream { details["upstream_status"] = .integer(upstream) }
        // The memory budget was full for this request's whole wait: memory frees as work ends.
        if error.kind == .overloaded { retryAfter = 2 }
    }

    /// The JSON body: keys sorted, so a body compares as text.
    var body: String {
        var fields: [String: ErrorField] = details
        fields["kind"] = .string(kind)
        fields["reason"] = .string(reason)
        if let source { fields["source"] = .string(source) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(fields) else { return #"{"kind":"internal"}"# + "\n" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// This failure as an answer: JSON, with Retry-After when it has one, and no body for HEAD.
    func response(method: HTTPRequest.Method) -> Response {
        var headers = headers
        let body = body
        headers[.contentType] = "application/json"
        headers[.contentLength] = String(body.utf8.count)
        if let seconds = retryAfter { headers[.retryAfter] = String(seconds) }
        if method == .head { return Response(status: status, headers: headers) }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}

/// A failure thrown anywhere Hummingbird answers renders itself.
extension ServeFailure: HTTPResponseError {
    func response(from request: Request, context: some RequestContext) throws -> Response {
        response(method: request.method)
    }
}
