import PipelineHost

/// An `s3://BUCKET/KEY` source, split and checked: a bucket name as S3 names them, a key that
/// is not empty, nothing else in the authority. The key is used as written: a key with spaces
/// or other reserved characters is written percent-encoded, as in an https URL.
public struct S3Source: Sendable, Equatable {
    /// The bucket: the source's authority.
    public let bucket: String
    /// The key, as written in the source (percent-encoded where needed).
    public let key: String
    /// After "?", as written (such as `versionId=...`).
    public let query: String?

    /// Splits and checks `location`; an `invalid_source` error says what is wrong.
    public init(_ location: String) throws(PipelineError) {
        let parsed = SourceLocation(location)
        guard parsed.scheme == "s3", let authority = parsed.authority else {
            throw PipelineError(.invalidSource, "not an s3:// source")
        }
        guard Self.isBucketName(authority) else {
            throw PipelineError(
                .invalidSource, "'\(authority)' is not an S3 bucket name (3 to 63 of a-z, 0-9, '.', '-')")
        }
        let path = parsed.resource.dropFirst("s3://".count + authority.count)
        guard path.count > 1 else { throw PipelineError(.invalidSource, "no object key after the bucket \(authority)") }
        guard !path.contains(where: { $0.isWhitespace || $0 == "\\" }) else {
            throw PipelineError(.invalidSource, "the object key holds spaces; percent-encode them")
        }
        // libcurl removes dot segments before it sends a path, so "s3://photos/../other/x" would
        // reach the bucket "other" at a path-style endpoint: the bucket allow_hosts matched must
        // be the one fetched. A key with a "." or ".." segment, written or %-encoded, is refused.
        let segments = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        if segments.contains(where: Self.isDotSegment) {
            throw PipelineError(.invalidSource, "the object key has a '.' or '..' segment")
        }
        bucket = String(authority)
        key = String(path.dropFirst())
        query = parsed.query.map(String.init)
    }

    /// ".", "..", and their %2e spellings.
    static func isDotSegment(_ segment: Substring) -> Bool {
        let decoded = segment.lowercased().replacing("%2e", with: ".")
        return decoded == "." || decoded == ".."
    }

    /// Bucket names: 3 to 63 lower-case letters, digits, dots and dashes, starting and ending
    /// with a letter or digit.
    public static func isBucketName<S: StringProtocol>(_ name: S) -> Bool {
        guard (3...63).contains(name.count), let first = name.first, let last = name.last,
            first.isLetter || first.isNumber, last.isLetter || last.isNumber
        else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "." || $0 == "-") }
    }
}
