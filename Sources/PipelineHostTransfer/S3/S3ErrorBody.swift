import PipelineHost

/// S3's error document (`<Error><Code>NoSuchKey</Code><Message>...</Message></Error>`), read
/// for its code and message only. A body that is not one gives nil: the status stands alone.
public struct S3ErrorBody: Sendable, Equatable {
    /// S3's code, such as "NoSuchKey".
    public let code: String
    /// S3's message for a person.
    public let message: String?

    /// Nil unless `body` is an S3 error document with a code.
    public init?(_ body: [UInt8]) {
        let text = String(decoding: body.prefix(16_384), as: UTF8.self)
        guard text.contains("<Error"), let code = Self.element("Code", in: text),
            !code.isEmpty, code.count <= 64, code.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else { return nil }
        self.code = code
        message = Self.element("Message", in: text).map { String($0.prefix(300)) }
    }

    private static func element(_ name: String, in text: String) -> String? {
        guard let open = text.firstRange(of: "<\(name)>"),
            let close = text[open.upperBound...].firstRange(of: "</\(name)>")
        else { return nil }
        return unescaped(String(text[open.upperBound..<close.lowerBound]))
    }

    /// XML's five entities, decoded.
    static func unescaped(_ text: String) -> String {
        text.replacing("&lt;", with: "<").replacing("&gt;", with: ">")
            .replacing("&quot;", with: "\"").replacing("&apos;", with: "'")
            .replacing("&amp;", with: "&")
    }

    /// Codes that say our credentials or signature are wrong: a fault of this node's
    /// configuration, not of the source, so never remembered as the source's failure.
    public static let credentialCodes: Set<String> = [
        "SignatureDoesNotMatch", "InvalidAccessKeyId", "ExpiredToken", "InvalidToken", "TokenRefreshRequired",
        "AuthorizationHeaderMalformed", "RequestTimeTooSkewed", "MissingSecurityHeader", "InvalidSecurity",
    ]
}

/// The error an S3 answer other than 2xx makes: the status, S3's code and message, and the
/// bucket, as in "S3 NoSuchKey (HTTP 404) from bucket photos: The specified key does not exist.".
enum S3Failure {
    static func error(status: Int, body: [UInt8], bucket: String?, retryAfter: Double?) -> PipelineError {
        let parsed = S3ErrorBody(body)
        var reason = "S3 " + (parsed.map { "\($0.code) (HTTP \(status))" } ?? "HTTP \(status)")
        if let bucket { reason += " from bucket \(bucket)" }
        if let message = parsed?.message, !message.isEmpty { reason += ": " + message }
        return PipelineError(
            .httpStatus, reason, details: FetchFailure(httpStatus: status, retryAfter: retryAfter, s3Code: parsed?.code)
        )
    }
}
