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
    func respond(to request: Request, context: ServeContext) async -> Response {
        let rawPath = Substring(request.uri.path)
        // The redacted path costs a parse of the source: only for an access log that is written.
        let logged = state.accessLog.logLevel <= .info
        if logged {
            context.access.note(path: "/-" + (rawPath.dropFirst().firstIndex(of: "/").map { Redactor.redactingPathParameters(rawPath[$0...]) } ?? ""))
        }
        do throws(ServeFailure) {
            let (image, profiles) = try resolve(request, path: rawPath)
            let logPath = logged ? "/-/\(image.profile)/\(Redactor.redact(image.source))" : "-"
            if logged { context.access.note(path: logPath) }
            var overrides: [String: [String: ParameterValue]] = [:]
            let auto = profiles.autoFormat.contains(image.profile)
            if auto, let profile = profiles.set[image.profile] {
                let format = FormatChoice.choose(accept: request.headers[.accept], canWriteAVIF: state.settings.canWriteAVIF)
                overrides = profile.formatOverrides(format)
            }
            let imageRequest = ImageRequest(source: image.source, profile: image.profile, overrides: overrides)
            let result = try await run(imageRequest, request: request, connection: context.channel)
            let answer = ImageResponse(result: result, variesByAccept: auto, defaultMaxAge: state.settings.defaultMaxAge)
            context.access.note(path: logPath, cache: answer.cacheResult)
            return answer.response(for: request)
        } catch {
            return error.response(method: request.method)
        }
    }

    /// The image the request asks for, checked as ImageResolver checks every image path.
    private func resolve(_ request: Request, path: Substring) throws(ServeFailure) -> (ImagePath, ServedProfiles) {
        let profiles = state.slot.now.profiles
        let image = try ImageResolver(settings: state.settings).resolve(
            path: path, query: request.uri.query.map { Substring($0) }, profiles: profiles)
        return (image, profiles)
    }

    /// Admits the request and runs it through the pipeline, cancelling it if the client closes
    /// the connection first.
    private func run(_ imageRequest: ImageRequest, request: Request, connection: any Channel) async throws(ServeFailure) -> PipelineResult {
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
        case .success(let result): return result
        case .failure(let error) where error.kind == .cancelled && timedOut.withLock({ $0 }):
            throw ServeFailure(.gatewayTimeout, "timeout", "the request took longer than --request-timeout (\(timeout))")
        case .failure(let error) where error.kind == .cancelled && !connection.isActive:
            throw ServeFailure(AccessLogMiddleware.clientClosed, "cancelled", "the client closed the connection")
        case .failure(let error): throw ServeFailure(error)
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
        }
    }
}
