#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Hummingbird
import PipelineHost

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
        let upstream: Int? = if case .integer(let code) = error.details?.jsonFields["http_status"] { code } else { nil }
        let status: HTTPResponse.Status = switch error.kind {
        case .httpStatus where upstream == 404 || upstream == 410: .notFound
        case .httpStatus, .transport: .badGateway
        case .timeout, .notCached: .gatewayTimeout
        case .notAnImage, .tooLarge, .unsupportedFormat, .pixelLimit, .decodeFailed, .invalidSource: .unprocessableContent
        case .blocked: .forbidden
        case .cancelled: .serviceUnavailable
        default: .internalServerError
        }
        self.init(status, error.kind.name, error.reason, source: error.source)
        details = error.details?.jsonFields ?? [:]
        if let upstream { details["upstream_status"] = .integer(upstream) }
    }

    /// The JSON body: keys sorted, so a body compares as text.
    var body: String {
        var fields: [String: ErrorField] = details
        fields["kind"] = .string(kind)
        fields["reason"] = .string(reason)
        if let source { fields["source"] = .string(source) }
        let members = fields.keys.sorted().map { name in "\(Self.quoted(name)):\(Self.json(fields[name]!))" }
        return "{" + members.joined(separator: ",") + "}\n"
    }

    private static func json(_ field: ErrorField) -> String {
        switch field {
        case .integer(let value): String(value)
        case .number(let value): value.isFinite ? String(value) : "null"
        case .string(let text): quoted(text)
        }
    }

    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
