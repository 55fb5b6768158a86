import HTTPTypes
import Hummingbird
import NIOCore
import PipelineHost

/// GET and HEAD of an image path: signature, profile, source policy, admission, then the shared
/// pipeline. A client that goes away cancels its own request only; the pipeline stops shared
/// work when its last waiter leaves.
struct ImageHandler: Sendable {
    let state: ServeState

    /// The response; the access log gets the path with the source redacted, and the cache result.
    ///
    /// `/info/{signature}/{profile}/{source}` answers the profile's info chain for the image
    /// path `/{signature}/{profile}/{source}` (same signature), as JSON.
    func respond(to request: Request, context: ServeContext) async -> Response {
        let fullPath = Substring(request.uri.path)
        let info = fullPath.hasPrefix(Self.infoPrefix + "/")
        let rawPath = info ? fullPath.dropFirst(Self.infoPrefix.count) : fullPath
        let prefix = info ? Self.infoPrefix : ""
        // The redacted path costs a parse of the source: only for an access log that is written.
        let logged = state.accessLog.logLevel <= .info
        if logged {
            context.access.note(path: prefix + "/-" + (rawPath.dropFirst().firstIndex(of: "/").map { Redactor.redactingPathParameters(rawPath[$0...]) } ?? ""))
        }
        do throws(ServeFailure) {
            let (resolved, profiles) = try resolve(request, path: rawPath)
            let image = resolved.image
            let logPath = logged ? "\(prefix)/-/\(image.profile)/\(Redactor.redact(image.source))" : "-"
            if logged { context.access.note(path: logPath) }
            var overrides = resolved.overrides
            let auto = !info && profiles.autoFormat.contains(image.profile)
            let profile = profiles.set[image.profile]
            if info, profile?.declaresInfo != true {
                throw ServeFailure.notFound("profile \"\(image.profile)\" does not answer /info: a profile that writes info { } does")
            }
            if auto, let profile {
                let format = FormatChoice.choose(accept: request.headers[.accept], canWriteAVIF: state.settings.canWriteAVIF)
                overrides.merge(profile.formatOverrides(format)) { $0.merging($1) { _, format in format } }
            }
            let chain = info ? ProfileSet.infoName(image.profile) : image.profile
            // The info chain has the profile's stages up to decode; an option of a later stage does not apply.
            if info { overrides = profiles.set.applicable(overrides, to: chain) }
            let vary = (auto ? ["Accept"] : []) + (info ? [] : resolved.hints)
            let imageRequest = ImageRequest(source: image.source, profile: chain, overrides: overrides)
            switch try await run(imageRequest, request: request, connection: context.channel) {
            case .success(let result):
                let answer = ImageResponse(result: result, vary: vary, defaultMaxAge: state.settings.defaultMaxAge)
                context.access.note(path: logPath, cache: answer.cacheResult)
                return withClientHints(answer.response(for: request), profile: profile)
            case .failure(let error):
                guard !info, let fallback = profile?.fallbackSetting, fallback.covers(error) else { throw ServeFailure(error) }
                let answer = try await fallbackAnswer(fallback, profile: image.profile, overrides: overrides, vary: vary, for: request)
                context.access.note(path: logPath, cache: "fallback")
                return withClientHints(answer, profile: profile)
            }
        } catch {
            return error.response(method: request.method)
        }
    }

    static let infoPrefix = "/info"
    static let acceptCH = HTTPField.Name("Accept-CH")!

    /// With --accept-ch, the response asks for the client hints the profile's options read.
    private func withClientHints(_ response: Response, profile: Profile?) -> Response {
        guard state.settings.acceptClientHints, let hints = profile?.options.compactMap(\.hint), !hints.isEmpty else { return response }
        var response = response
        response.headers[Self.acceptCH] = Set(hints).map { "Sec-CH-" + $0.rawValue }.sorted().joined(separator: ", ")
        return response
    }

    /// The profile's fallback, made by its fallback chain (once, then from the memory cache),
    /// with the fallback's status and a short max-age. Its source is the profile's fallback,
    /// never the failed source, so nothing is stored under the failed source's key.
    private func fallbackAnswer(_ fallback: Fallback, profile: String, overrides: [String: [String: ParameterValue]],
                                vary: [String], for request: Request) async throws(ServeFailure) -> Response {
        let made: PipelineResult
        do {
            let slot = state.slot.now, chain = ProfileSet.fallbackName(profile)
            made = try await slot.pipeline.image(for: ImageRequest(
                source: Fallback.source(of: profile), profile: chain, overrides: slot.profiles.set.applicable(overrides, to: chain)))
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
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: made.bytes.buffer)))
    }

    /// The image the request asks for, checked as ImageResolver checks every image path.
    private func resolve(_ request: Request, path: Substring) throws(ServeFailure) -> (ImageResolver.Resolved, ServedProfiles) {
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
    private func run(_ imageRequest: ImageRequest, request: Request,
                     connection: any Channel) async throws(ServeFailure) -> Result<PipelineResult, PipelineError> {
        guard state.gate.enter() else {
            var full = ServeFailure(.serviceUnavailable, "queue_full", "\(state.gate.limit) requests are waiting (--max-queue); try again shortly")
            full.retryAfter = 1
            throw full
        }
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
        // The request's time budget: past it, the request leaves like a client that hung up,
        // so its transfer and pixel work stop unless another request still shares them.
        let timeout = state.settings.requestTimeout
        let timedOut = Locked(false)
        let deadline = state.deadlines.start(timeout) {
            timedOut.withLock { $0 = true }
            work.cancel()
        }
        let outcome = await withTaskCancellationHandler { await work.value } onCancel: { work.cancel() }
        state.deadlines.finish(deadline)
        if let tracked { watch?.untrack(tracked) }
        switch outcome {
        case .failure(let error) where error.kind == .cancelled && timedOut.withLock({ $0 }):
            throw ServeFailure(.gatewayTimeout, "timeout", "the request took longer than --request-timeout (\(timeout))")
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
