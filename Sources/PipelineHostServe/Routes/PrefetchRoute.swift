import Hummingbird
import PipelineHost

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// POST /prefetch with a JSON list of signed image paths: each one that checks out runs at low
/// priority, so the next real request is a cache hit. Answers 202 at once with what was taken.
struct PrefetchRoute: Sendable {
    let state: ServeState
    /// A body larger than this is refused: a prefetch list is paths, not images.
    static let maxBody = 1 << 20
    static let maxPaths = 1000

    func respond(to request: Request) async throws(ServeFailure) -> Response {
        let paths = try await Self.paths(request)
        var requests: [ImageRequest] = []
        var refused: [String] = []
        let redaction = state.slot.now.profiles.set.redaction
        for path in paths {
            switch check(path) {
            case .success(let imageRequest): requests.append(imageRequest)
            case .failure(let failure): refused.append("\(redaction(path)): \(failure.reason)")
            }
        }
        if !requests.isEmpty { try start(requests) }
        let body = "{\"accepted\":\(requests.count),\"refused\":\(refused.count)}\n"
        var headers: HTTPFields = [:]
        headers[.contentType] = "application/json"
        return Response(status: .accepted, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    private static func paths(_ request: Request) async throws(ServeFailure) -> [String] {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maxBody)
        } catch {
            throw ServeFailure(.contentTooLarge, "too_large", "the prefetch list is over \(maxBody) bytes")
        }
        guard let paths = try? JSONDecoder().decode([String].self, from: Data(buffer.readableBytesView)) else {
            throw ServeFailure(.badRequest, "bad_request", "the body must be a JSON list of signed paths")
        }
        guard paths.count <= maxPaths else {
            throw ServeFailure(.contentTooLarge, "too_large", "at most \(maxPaths) paths per prefetch")
        }
        return paths
    }

    /// The same checks as a GET of the path (ImageResolver), a "?" starting its query.
    private func check(_ path: String) -> Result<ImageRequest, ServeFailure> {
        let raw = Substring(path)
        let (pathPart, query) =
            raw.firstIndex(of: "?").map { (raw[..<$0], Optional(raw[raw.index(after: $0)...])) } ?? (raw, nil)
        let profiles = state.slot.now.profiles
        let resolved: ImageResolver.Resolved
        do {
            resolved = try ImageResolver(settings: state.settings).resolve(
                path: pathPart, query: query, profiles: profiles)
        } catch {
            return .failure(error)
        }
        let image = resolved.image
        // An auto-format profile is warmed for what a client without Accept gets (JPEG).
        return .success(
            profiles.set.request(
                source: image.source, profile: image.profile, choices: resolved.choices,
                canWriteAVIF: state.settings.canWriteAVIF
            ).request)
    }

    /// Runs the batch at low priority; at most a few batches at once. Each of its requests is
    /// admitted as a client's is, counting against `--max-queue` while it runs (one the full
    /// queue refuses is skipped, so clients keep their room), and held to `--request-timeout`.
    private func start(_ requests: [ImageRequest]) throws(ServeFailure) {
        try state.prefetches.admit()
        let state = state
        let pipeline = state.slot.now.pipeline
        let prefetch = pipeline.prefetch(requests) { request in
            guard state.gate.enter() else { return false }
            defer { state.gate.leave() }
            let work = Task { (try? await pipeline.image(for: request, priority: .low)) != nil }
            return await state.withinDeadline(work).value
        }
        Task {
            _ = await prefetch.wait()
            state.prefetches.leave()
        }
    }
}
