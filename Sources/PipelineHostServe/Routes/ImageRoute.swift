import HTTPTypes
import Hummingbird
import NIOCore
import PipelineHost

/// GET and HEAD of an image path, `/{signature}/{profile}/{source}`, and of its description,
/// `/info/{signature}/{profile}/{source}` (the same signature): signature, profile, source
/// policy, admission, then the shared pipeline. A client that goes away cancels its own request
/// only; the pipeline stops shared work when its last waiter leaves. Failures are thrown as
/// `ServeFailure`s, which Hummingbird renders.
struct ImageRoute: Sendable {
    let state: ServeState

    /// The image, or the profile's fallback when the failure is one its `on` lists.
    func image(_ request: Request, context: ServeContext) async throws(ServeFailure) -> Response {
        let path = Substring(request.uri.path)
        noteRedacted(path, prefix: "", context: context)
        let (resolved, profiles) = try resolve(request, path: path)
        let image = resolved.image
        let logPath = note(image, prefix: "", redaction: profiles.set.redaction, context: context)
        let profile = profiles.set[image.profile]
        let built = profiles.set.request(
            source: image.source, profile: image.profile, choices: resolved.choices, hints: resolved.hints,
            accept: request.headers[.accept], canWriteAVIF: state.settings.canWriteAVIF)
        let (imageRequest, vary) = (built.request, built.vary)
        switch try await run(imageRequest, request: request, connection: context.channel) {
        case .success(let result):
            let answer = ImageResponse(result: result, vary: vary, defaultMaxAge: state.settings.defaultMaxAge)
            context.access.note(endpoint: .image, path: logPath, cache: answer.cacheResult)
            return withClientHints(answer.response(for: request), profile: profile)
        case .failure(let error):
            guard let fallback = profile?.fallbackSetting, fallback.covers(error) else { throw ServeFailure(error) }
            let answer = try await fallbackAnswer(fallback, for: imageRequest, vary: vary, request: request)
            context.access.note(endpoint: .image, path: logPath, cache: "fallback")
            return withClientHints(answer, profile: profile)
        }
    }

    /// The profile's info chain for the image path after `/info`, as JSON; only a profile that
    /// writes `info { }` answers it.
    func info(_ request: Request, context: ServeContext) async throws(ServeFailure) -> Response {
        let path = Substring(request.uri.path).dropFirst(Self.infoPrefix.count)
        noteRedacted(path, prefix: Self.infoPrefix, context: context)
        let (resolved, profiles) = try resolve(request, path: path)
        let image = resolved.image
        let logPath = note(image, prefix: Self.infoPrefix, redaction: profiles.set.redaction, context: context)
        let profile = profiles.set[image.profile]
        guard profile?.declaresInfo == true else {
            throw ServeFailure.notFound(
                "profile \"\(image.profile)\" does not answer /info: a profile that writes info { } does")
        }
        // The info chain has the profile's stages up to decode; an option of a later stage does not apply.
        let imageRequest = profiles.set.infoRequest(
            source: image.source, profile: image.profile, choices: resolved.choices)
        switch try await run(imageRequest, request: request, connection: context.channel) {
        case .success(let result):
            let answer = ImageResponse(result: result, vary: [], defaultMaxAge: state.settings.defaultMaxAge)
            context.access.note(endpoint: .info, path: logPath, cache: answer.cacheResult)
            return withClientHints(answer.response(for: request), profile: profile)
        case .failure(let error):
            throw ServeFailure(error)
        }
    }

    static let infoPrefix = "/info"

    /// Notes the path with its source redacted, before the path is checked. The redacted path
    /// costs a parse of the source: only for an access log that is written.
    private func noteRedacted(_ path: Substring, prefix: String, context: ServeContext) {
        let redacted = path.dropFirst().firstIndex(of: "/").map { Redactor.redactingPathParameters(path[$0...]) } ?? ""
        context.access.note(
            endpoint: prefix.isEmpty ? .image : .info,
            path: state.accessLog.logLevel <= .info ? prefix + "/-" + redacted : "-")
    }

    /// Notes the checked image's profile and its source as the profiles redact it, and returns
    /// what was noted.
    private func note(
        _ image: ImagePath, prefix: String, redaction: Redaction, context: ServeContext
    ) -> String {
        let logPath =
            state.accessLog.logLevel <= .info ? "\(prefix)/-/\(image.profile)/\(redaction(image.source))" : "-"
        context.access.note(endpoint: prefix.isEmpty ? .image : .info, path: logPath)
        context.access.note(profile: image.profile)
        return logPath
    }

    static let acceptCH = HTTPField.Name("Accept-CH")!

    /// With --accept-ch, the response asks for the client hints the profile's options read.
    private func withClientHints(_ response: Response, profile: Profile?) -> Response {
        guard state.settings.acceptClientHints, let hints = profile?.options.compactMap(\.hint), !hints.isEmpty else {
            return response
        }
        var response = response
        response.headers[Self.acceptCH] = Set(hints).map { "Sec-CH-" + $0.rawValue }.sorted().joined(separator: ", ")
        return response
    }

    /// The profile's fallback, made by its fallback chain (once, then from the memory cache),
    /// with the fallback's status and a short max-age.
    private func fallbackAnswer(
        _ fallback: Fallback, for failed: ImageRequest, vary: [String],
        request: Request
    ) async throws(ServeFailure) -> Response {
        let made: PipelineResult
        do {
            let slot = state.slot.now
            made = try await slot.pipeline.image(for: slot.profiles.set.fallbackRequest(for: failed))
        } catch {
            throw ServeFailure(error)
        }
        var headers: HTTPFields = [:]
        headers[.cacheControl] = "public, max-age=\(fallback.maxAge)"
        headers[ImageResponse.xCache] = "fallback"
        if !vary.isEmpty { headers[.vary] = vary.joined(separator: ", ") }
        headers[.contentType] = FormatChoice.mediaType(made.format)
        headers[.contentLength] = String(made.bytes.count)
        let status = HTTPResponse.Status(code: fallback.status)
        if request.method == .head { return Response(status: status, headers: headers) }
        return Response(
            status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: made.bytes.buffer)))
    }

    /// The image the request asks for, checked as ImageResolver checks every image path.
    private func resolve(_ request: Request, path: Substring) throws(ServeFailure) -> (
        ImageResolver.Resolved, ServedProfiles
    ) {
        let profiles = state.slot.now.profiles
        let resolved = try ImageResolver(settings: state.settings).resolve(
            path: path, query: request.uri.query.map { Substring($0) }, profiles: profiles,
            header: { name in HTTPField.Name(name).flatMap { request.headers[$0] } })
        return (resolved, profiles)
    }

    /// Admits the request and runs it through the pipeline, cancelling it if the client closes
    /// the connection first.
    /// Cancellation, a timeout and a full queue are thrown; the pipeline's own outcome is
    /// returned, so a failure can still fall back.
    private func run(
        _ imageRequest: ImageRequest, request: Request,
        connection: any Channel
    ) async throws(ServeFailure) -> Result<PipelineResult, PipelineError> {
        try state.gate.admit()
        defer { state.gate.leave() }
        let pipeline = state.slot.now.pipeline
        let priority = Self.priority(request.headers[Self.xPriority])
        // A task of its own, so the connection's close can cancel it; the pipeline counts it as
        // one waiter and stops shared work only when no other waiter is left.
        let work = Task { () async -> Result<PipelineResult, PipelineError> in
            do throws(PipelineError) {
                return .success(try await pipeline.image(for: imageRequest, priority: priority))
            } catch {
                return .failure(error)
            }
        }
        let watch = ConnectionWatch.current
        let tracked = watch?.track { work.cancel() }
        let (outcome, timedOut) = await state.withinDeadline(work)
        if let tracked { watch?.untrack(tracked) }
        switch outcome {
        case .failure(let error) where error.kind == .cancelled && timedOut:
            throw ServeFailure(
                .gatewayTimeout, "timeout",
                "the request took longer than --request-timeout (\(state.settings.requestTimeout))")
        case .failure(let error) where error.kind == .cancelled && !connection.isActive:
            throw ServeFailure(AccessLogMiddleware.clientClosed, "cancelled", "the client closed the connection")
        default: return outcome
        }
    }

    static let xPriority = HTTPField.Name("X-Priority")!

    /// X-Priority: low, normal or high; anything else is normal.
    static func priority(_ header: String?) -> Priority {
        switch header?.lowercased() {
        case "low": .low
        case "high": .high
        default: .normal
        }
    }
}

extension ImagePath.Problem {
    var message: String {
        switch self {
        case .notAnImagePath: "not an image path: use /{signature}/{profile}/{base64url source} or .../plain/{source}"
        case .badSource(let why): why
        case .badOption(let why): why
        }
    }
}
