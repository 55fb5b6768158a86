import PipelineHost

/// A bucket, reached with the fetch stage's libcurl transfer and signature: get, put, delete
/// and list, for the object-store tier and purge. Every call has a time limit and runs on the
/// transfer threads, never the cooperative pool.
public struct S3Client: Sendable {
    /// How S3 is reached and signed for.
    public let configuration: S3Configuration
    /// The bucket every call goes to.
    public let bucket: String
    private let options: FetchOptions

    /// A client of `bucket`; each call may take `timeout` seconds and read `maxBytes`.
    public init(configuration: S3Configuration, bucket: String, timeout: Double = 5, maxBytes: Int = 64 << 20) {
        self.configuration = configuration
        self.bucket = bucket
        options = FetchOptions(timeout: timeout, maxBytes: maxBytes)
    }

    /// What S3 answered: its status and body (an object, a listing or an error document).
    public struct Response: Sendable {
        /// The HTTP status.
        public let status: Int
        /// The body: the object, a listing or an error document.
        public let bytes: ImageBytes
        /// The failure a 4xx or 5xx makes, naming the bucket and S3's code.
        public let failure: PipelineError?
    }

    /// GET an object; a missing one is status 404, not an error.
    public func get(_ key: String) async throws(PipelineError) -> Response {
        try await send(key: key)
    }

    /// PUT an object; an answer other than 2xx is an error.
    public func put(_ key: String, bytes: [UInt8], contentType: String = "application/octet-stream")
        async throws(PipelineError)
    {
        let response = try await send(key: key, method: "PUT", upload: bytes, contentType: contentType)
        if let failure = response.failure { throw failure }
    }

    /// DELETE an object; deleting one that is not there succeeds, as S3 answers 204 for it.
    public func delete(_ key: String) async throws(PipelineError) {
        let response = try await send(key: key, method: "DELETE")
        if let failure = response.failure, response.status != 404 { throw failure }
    }

    /// Every key under `prefix`, following ListObjectsV2's continuation tokens.
    public func list(prefix: String) async throws(PipelineError) -> [String] {
        var keys: [String] = []
        var token: String?
        repeat {
            var query = "list-type=2&prefix=" + Self.percentEncoded(prefix)
            if let token { query = "continuation-token=" + Self.percentEncoded(token) + "&" + query }
            let response = try await send(key: "", query: query)
            if let failure = response.failure { throw failure }
            let page = S3Listing(response.bytes.array)
            keys += page.keys
            token = page.nextToken
        } while token != nil && keys.count < 1_000_000
        return keys
    }

    private func send(
        key: String, method: String? = nil, query: String? = nil, upload: [UInt8]? = nil, contentType: String? = nil
    ) async throws(PipelineError) -> Response {
        let url = try FetchURL.resolve(
            configuration.url(bucket: bucket, key: key, query: query), allowing: ["http", "https"])
        let request = CurlTransfer.Request(
            url: url, method: method, upload: upload, contentType: contentType, signing: configuration, bucket: bucket)
        let options = self.options
        let exchange = try await BlockingExecutor.transfers.run { () throws(PipelineError) -> CurlTransfer.Exchange in
            try CurlTransfer.perform(request, options: options, share: CurlTransfer.storePool, cancel: CancelFlag())
        }
        return Response(status: exchange.status, bytes: exchange.bytes, failure: exchange.failure)
    }

    /// RFC 3986 unreserved characters stay; everything else is %XX, as SigV4's canonical query wants.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if c.isASCII && (c.isLetter || c.isNumber || "-._~".contains(c)) {
                out.append(c)
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: Swift.max(0, width - count)) + self
    }
}

/// One page of ListObjectsV2: its keys and the token of the next page.
struct S3Listing {
    var keys: [String] = []
    var nextToken: String?

    init(_ body: [UInt8]) {
        let text = String(decoding: body, as: UTF8.self)
        var rest = text[...]
        while let open = rest.firstRange(of: "<Key>"), let close = rest[open.upperBound...].firstRange(of: "</Key>") {
            keys.append(S3ErrorBody.unescaped(String(rest[open.upperBound..<close.lowerBound])))
            rest = rest[close.upperBound...]
        }
        if text.contains("<IsTruncated>true</IsTruncated>"), let open = text.firstRange(of: "<NextContinuationToken>"),
            let close = text[open.upperBound...].firstRange(of: "</NextContinuationToken>")
        {
            nextToken = S3ErrorBody.unescaped(String(text[open.upperBound..<close.lowerBound]))
        }
    }
}
