import PipelineHost

/// What a failed transfer knows besides its kind and reason: the HTTP status it got, curl's
/// code, and the server's Retry-After. It travels as a `PipelineError`'s details.
public struct FetchFailure: ErrorDetails, Equatable {
    /// The HTTP status, for `.httpStatus`.
    public var httpStatus: Int?
    /// curl's numeric code, for `.transport`, `.timeout` and some `.invalidSource`.
    public var curlCode: Int?
    /// For 429 and 5xx: the server's Retry-After, in seconds from when it answered.
    public var retryAfter: Double?
    /// For an S3 source: S3's error code, such as "NoSuchKey" or "SignatureDoesNotMatch".
    public var s3Code: String?

    /// Details of a failed transfer.
    public init(httpStatus: Int? = nil, curlCode: Int? = nil, retryAfter: Double? = nil, s3Code: String? = nil) {
        self.httpStatus = httpStatus
        self.curlCode = curlCode
        self.retryAfter = retryAfter
        self.s3Code = s3Code
    }

    /// The HTTP status, for serve and the shared cache.
    public var upstreamStatus: Int? { httpStatus }

    /// S3 refused this node's credentials or signature.
    public var isLocalConfiguration: Bool { s3Code.map(S3ErrorBody.credentialCodes.contains) ?? false }

    /// The fields `run --json` prints: http_status, curl_code, retry_after.
    public var jsonFields: [String: ErrorField] {
        var fields: [String: ErrorField] = [:]
        if let httpStatus { fields["http_status"] = .integer(httpStatus) }
        if let curlCode { fields["curl_code"] = .integer(curlCode) }
        if let retryAfter { fields["retry_after"] = .number(retryAfter) }
        if let s3Code { fields["s3_code"] = .string(s3Code) }
        return fields
    }
}

extension PipelineError {
    /// The HTTP status of a fetch that was answered with something other than 2xx.
    public var httpStatus: Int? { (details as? FetchFailure)?.httpStatus }
    /// curl's code for a transfer that failed.
    public var transportCode: Int? { (details as? FetchFailure)?.curlCode }
    /// The server's Retry-After, in seconds, for 429 and 5xx.
    public var retryAfter: Double? { (details as? FetchFailure)?.retryAfter }
    /// S3's error code, for an S3 source.
    public var s3Code: String? { (details as? FetchFailure)?.s3Code }
}
