import PipelineHost

#if canImport(Glibc)
    import Glibc
#endif

/// Where S3 is and who pipelinehost is to it, from the standard AWS environment and nothing
/// else (no profile names a credential): `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
/// `AWS_SESSION_TOKEN`, `AWS_REGION` or `AWS_DEFAULT_REGION`, and `AWS_ENDPOINT_URL_S3` or
/// `AWS_ENDPOINT_URL` for an S3-compatible store (MinIO, R2, Ceph), which is then addressed
/// path-style. libcurl signs each request with Signature V4.
public struct S3Configuration: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// `AWS_ACCESS_KEY_ID`.
    public var accessKeyID: String
    /// `AWS_SECRET_ACCESS_KEY`: given to libcurl's signer only, never printed.
    public var secretAccessKey: String
    /// `AWS_SESSION_TOKEN`, sent as `x-amz-security-token`.
    public var sessionToken: String?
    /// `AWS_REGION`, else `AWS_DEFAULT_REGION`, else us-east-1.
    public var region: String
    /// "http://127.0.0.1:9000", without a trailing slash; nil: AWS itself, virtual-hosted.
    public var endpoint: String?

    /// A configuration given in full (the environment's is `from(environment:)`).
    public init(
        accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, region: String = "us-east-1",
        endpoint: String? = nil
    ) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.region = region
        self.endpoint = endpoint
    }

    /// Why the environment does not make a configuration; names the variable, never its value
    /// when that value is a secret.
    public struct Problem: Error, CustomStringConvertible, Equatable {
        /// The variable and what is wrong with it.
        public let description: String
    }

    /// The configuration `environment` gives. Every value is checked: a region of letters,
    /// digits and dashes, an endpoint that is an http(s) URL with no path, query or user
    /// information, and keys without control characters or ":" in the key id.
    public static func from(environment: [String: String]) throws(Problem) -> S3Configuration {
        func value(_ name: String) -> String? {
            environment[name].flatMap { $0.isEmpty ? nil : $0 }
        }
        guard let key = value("AWS_ACCESS_KEY_ID"), let secret = value("AWS_SECRET_ACCESS_KEY") else {
            throw Problem(description: "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        }
        guard key.count <= 128, key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw Problem(description: "AWS_ACCESS_KEY_ID is not an access key id (letters and digits, at most 128)")
        }
        guard secret.utf8.count <= 256, !secret.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f }) else {
            throw Problem(description: "AWS_SECRET_ACCESS_KEY is longer than 256 bytes or holds control characters")
        }
        let token = value("AWS_SESSION_TOKEN")
        if let token, token.utf8.count > 3000 || token.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f }) {
            throw Problem(description: "AWS_SESSION_TOKEN is longer than 3000 bytes or holds control characters")
        }
        let region = value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? "us-east-1"
        guard (1...64).contains(region.count),
            region.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") })
        else {
            throw Problem(description: "AWS_REGION '\(region)' is not a region name (such as eu-west-1)")
        }
        var endpoint: String?
        for name in ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"] {
            guard let text = value(name) else { continue }
            endpoint = try checkedEndpoint(text, name: name)
            break
        }
        return S3Configuration(
            accessKeyID: key, secretAccessKey: secret, sessionToken: token, region: region, endpoint: endpoint)
    }

    /// The process's own environment, read once.
    public static let processEnvironment: [String: String] = ProcessEnvironment.variables(withPrefix: "AWS_")

    /// The process's configuration, or why there is none; read once.
    public static let current: Result<S3Configuration, Problem> = Result {
        () throws(Problem) -> S3Configuration in try from(environment: processEnvironment)
    }

    private static func checkedEndpoint(_ text: String, name: String) throws(Problem) -> String {
        let location = SourceLocation(text)
        let trimmed = text.hasSuffix("/") ? String(text.dropLast()) : text
        guard let scheme = location.scheme, scheme == "http" || scheme == "https", location.query == nil,
            location.fragment == nil, location.userInfo == nil, let host = location.hostAndPort, !host.isEmpty,
            trimmed == "\(scheme)://\(location.authority ?? "")",
            trimmed.allSatisfy({ $0.isASCII && !$0.isWhitespace })
        else {
            throw Problem(
                description:
                    "\(name) '\(Redactor.redact(text))' is not an http(s) URL of a host (such as http://127.0.0.1:9000)"
            )
        }
        return trimmed
    }

    /// The key id, region and endpoint; never the secret or the token, wherever it is printed
    /// (a log line, `dump`, string interpolation).
    public var description: String {
        "S3(key \(accessKeyID), region \(region), \(endpoint ?? "AWS")\(sessionToken == nil ? "" : ", session token"))"
    }
    /// The same as `description`.
    public var debugDescription: String { description }
    /// Only `description`, so `dump` and reflection show no secret either.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }

    /// libcurl's CURLOPT_AWS_SIGV4 provider string.
    var signingProvider: String { "aws:amz:\(region):s3" }
    /// libcurl's CURLOPT_USERPWD for the signature.
    var credentials: String { "\(accessKeyID):\(secretAccessKey)" }

    /// The https URL of `key` in `bucket` (already percent-encoded as S3 keys in URLs are),
    /// with an optional query: path-style at the endpoint, or virtual-hosted at AWS.
    public func url(bucket: String, key: String, query: String? = nil) -> String {
        let base =
            endpoint.map { "\($0)/\(bucket)/" } ?? "https://\(bucket).s3.\(region).amazonaws.com/"
        return base + key + (query.map { "?" + $0 } ?? "")
    }
}
