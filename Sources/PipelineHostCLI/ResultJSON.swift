#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PipelineHost

/// `run --json`: one JSON object per line on standard output, for each result and each error.
/// Keys are sorted and absent values left out, so a line can be compared as text.
enum ResultJSON {
    struct Line: Encodable {
        /// "result", "error" or "stats".
        var type: String
        var source: String
        var profile: String
        var output: String?
        var format: String?
        var width: Int?
        var height: Int?
        var bytes: Int?
        var ms: Double?
        /// "memory" or "disk" when a cache answered.
        var cache: String?
        var stale: Bool?
        var shared: Bool?
        /// The error's kind: "http_status", "not_an_image", "timeout", ... (PipelineError.Kind).
        var kind: String?
        var reason: String?
        var message: String?
        var httpStatus: Int?
        var curlCode: Int?
        var sniffedType: String?
        var retryAfter: Double?
    }

    static func success(_ result: PipelineResult, path: String) -> String {
        var line = Line(type: "result", source: result.source, profile: result.request.profile)
        line.output = path
        line.format = result.format
        line.width = result.size?.width
        line.height = result.size?.height
        line.bytes = result.bytes.count
        line.ms = (result.duration.milliseconds * 10).rounded() / 10
        line.cache = result.memoryHit ? "memory" : result.diskHit ? "disk" : nil
        line.stale = result.stale
        line.shared = result.coalesced
        return encode(line)
    }

    static func failure(_ error: PipelineError, source: String, profile: String) -> String {
        var line = Line(type: "error", source: source, profile: profile)
        line.kind = error.kind.name
        line.reason = error.reason
        line.message = "\(source): \(error.reason)"
        line.httpStatus = error.httpStatus
        line.curlCode = error.transportCode
        line.sniffedType = error.sniffedType
        line.retryAfter = error.retryAfter
        return encode(line)
    }

    static func encode(_ line: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        guard let data = try? encoder.encode(line) else { return #"{"type":"error","kind":"internal"}"# }
        return String(decoding: data, as: UTF8.self)
    }
}
