import Hummingbird
import PipelineHost

/// POST /purge/{signature}/{base64url source}: drops every original and variant of the source
/// from this node's memory and disk, from Redis and from the object store, and has the other
/// nodes sharing Redis drop their copies. Always signed, with --allow-unsigned too: a purge is
/// never anyone's to make. Answers 200 with what each tier removed, 502 when a tier failed.
struct PurgeRoute: Sendable {
    let state: ServeState

    func respond(to request: Request) async throws(ServeFailure) -> Response {
        guard let parsed = PurgePath.parse(Substring(request.uri.path)) else {
            throw ServeFailure(
                .badRequest, "bad_request", "a purge path is /purge/{signature}/{base64url source}")
        }
        guard state.settings.signer.accepts(parsed.signature, for: Substring(PurgePath.message(parsed.encoded)))
        else {
            throw ServeFailure.forbidden("bad signature (sign the path with `pipelinehost sign --purge SOURCE`)")
        }
        try state.purges.admit()
        defer { state.purges.leave() }
        let report = await state.slot.now.pipeline.purge(sources: [parsed.source])
        let removed = report.removed.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }
        let failures = report.failures.map { "\"" + Self.escaped(Redactor.redact($0)) + "\"" }
        let body =
            "{\"removed\":{\(removed.joined(separator: ","))},\"failures\":[\(failures.joined(separator: ","))]}\n"
        var headers: HTTPFields = [:]
        headers[.contentType] = "application/json"
        return Response(
            status: report.failures.isEmpty ? .ok : .badGateway, headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    private static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += " "
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
