import PipelineHost

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
        /// `PipelineResult.coalesced`, written as "shared": the key scripts already read.
        var coalesced: Bool?
        /// The error's kind: "http_status", "not_an_image", "timeout", ... (PipelineError.Kind).
        var kind: String?
        var reason: String?
        var message: String?
        /// run --fallback: where the profile's fallback was written for this failed source.
        var fallback: String?
        /// The failed layer's own fields (http_status, curl_code, retry_after, sniffed_type, ...),
        /// written as they come: the CLI does not need to know them.
        var details: [String: ErrorField] = [:]

        private struct Key: CodingKey {
            let stringValue: String
            init(_ name: String) { stringValue = name }
            init?(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(type, forKey: Key("type"))
            try container.encode(source, forKey: Key("source"))
            try container.encode(profile, forKey: Key("profile"))
            try container.encodeIfPresent(output, forKey: Key("output"))
            try container.encodeIfPresent(format, forKey: Key("format"))
            try container.encodeIfPresent(width, forKey: Key("width"))
            try container.encodeIfPresent(height, forKey: Key("height"))
            try container.encodeIfPresent(bytes, forKey: Key("bytes"))
            try container.encodeIfPresent(ms, forKey: Key("ms"))
            try container.encodeIfPresent(cache, forKey: Key("cache"))
            try container.encodeIfPresent(stale, forKey: Key("stale"))
            try container.encodeIfPresent(coalesced, forKey: Key("shared"))
            try container.encodeIfPresent(kind, forKey: Key("kind"))
            try container.encodeIfPresent(reason, forKey: Key("reason"))
            try container.encodeIfPresent(message, forKey: Key("message"))
            try container.encodeIfPresent(fallback, forKey: Key("fallback"))
            for (name, value) in details { try container.encode(value, forKey: Key(name)) }
        }
    }

    static func success(_ result: PipelineResult, path: String) -> String {
        var line = Line(type: "result", source: result.source, profile: result.request.profile)
        line.output = path
        line.format = result.format
        line.width = result.size?.width
        line.height = result.size?.height
        line.bytes = result.bytes.count
        line.ms = (result.duration.milliseconds * 10).rounded() / 10
        line.cache =
            result.memoryHit
            ? "memory" : result.diskHit ? "disk" : result.sharedHit ? result.sharedTier ?? "shared" : nil
        line.stale = result.stale
        line.coalesced = result.coalesced
        return encode(line)
    }

    static func failure(_ error: PipelineError, source: String, profile: String, fallback: String? = nil) -> String {
        var line = Line(type: "error", source: source, profile: profile)
        line.fallback = fallback
        line.kind = error.kind.name
        line.reason = error.reason
        line.message = "\(source): \(error.reason)"
        line.details = error.details?.jsonFields ?? [:]
        return encode(line)
    }

    static func encode(_ line: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(line) else { return #"{"type":"error","kind":"internal"}"# }
        return String(decoding: data, as: UTF8.self)
    }
}
