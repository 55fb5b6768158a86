import CCurl
import Glibc
import PipelineHost

/// One libcurl transfer run on a blocking thread, cancelled through the progress callback.
package enum CurlTransfer {
    package struct Body: Sendable {
        package let bytes: ImageBytes
        package let contentType: String?
        /// nil for file:// (no headers).
        package let hints: CacheHints?
        /// 304 to a conditional request: `bytes` is empty and the stored copy is still good.
        package let notModified: Bool
    }

    /// One connection pool (a curl share handle: connections, DNS and TLS sessions) per address
    /// guard setting, reused across transfers and threads. The address check runs only when a
    /// connection is opened, so a transfer must never reuse one opened under a looser guard:
    /// `block_private` with `allow_loopback` may connect to 127.0.0.1, and a strict profile in
    /// the same process must not be handed that connection.
    static let unguardedPool = CurlShare()
    private static let strictPool = CurlShare()
    private static let loopbackPool = CurlShare()
    /// The object-store tier's connections, apart from sources' so neither waits on the other.
    static let storePool = CurlShare()

    static func pool(for options: FetchOptions) -> CurlShare {
        guard options.blockPrivate else { return unguardedPool }
        return options.allowLoopback ? loopbackPool : strictPool
    }

    /// What one transfer asks for besides the fetch options: the URL, validators for a
    /// conditional GET, and for S3 the signature, a method and a body.
    package struct Request: Sendable {
        package var url: FetchURL.Resolved
        package var validators: Validators?
        var method: String?
        var upload: [UInt8]?
        var contentType: String?
        var extraHeader: String?
        /// The trace context of the fetch's span (`traceparent`, `tracestate`), so the origin's
        /// own traces join the request's.
        package var traceHeaders: [(name: String, value: String)] = []
        /// Signs with Signature V4; the transfer goes to an endpoint the operator chose, so the
        /// address guard and allow_hosts (which matched the bucket) do not apply to it.
        package var signing: S3Configuration?
        /// Named in S3 errors.
        package var bucket: String?

        /// `traceHeaders` as "Name: value" lines joined by newlines, as ph_curl.c takes them.
        var traceHeaderLines: String? {
            traceHeaders.isEmpty ? nil : traceHeaders.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
        }
    }

    static func fetch(_ url: FetchURL.Resolved, validators: Validators?, options: FetchOptions, context: StageContext)
        async throws -> Body
    {
        try await fetch(Request(url: url, validators: validators), options: options, context: context)
    }

    package static func fetch(_ request: Request, options: FetchOptions, context: StageContext) async throws -> Body {
        let flag = CancelFlag()
        let share = request.signing == nil ? pool(for: options) : unguardedPool
        return try await withTaskCancellationHandler {
            try await context.runBlocking {
                try perform(request, options: options, share: share, cancel: flag).body()
            }
        } onCancel: {
            flag.set()
        }
    }

    /// A transfer that answered, whatever the status, or the failure that kept it from
    /// answering. S3's client reads the status itself; the fetch stage takes `body()`.
    struct Exchange: Sendable {
        let status: Int
        let bytes: ImageBytes
        let contentType: String?
        let hints: CacheHints?
        let notModified: Bool
        /// The error a fetch reports for this answer; nil for 2xx (and 304 to a conditional GET).
        let failure: PipelineError?

        func body() throws(PipelineError) -> Body {
            if let failure { throw failure }
            return Body(
                bytes: notModified ? ImageBytes(copying: []) : bytes, contentType: contentType, hints: hints,
                notModified: notModified)
        }
    }

    /// Runs one transfer on the calling thread. Throws only when no answer came (a refused
    /// connection, a timeout, a limit); an HTTP status of any kind is an `Exchange`.
    static func perform(_ request: Request, options: FetchOptions, share: CurlShare, cancel: CancelFlag)
        throws(PipelineError) -> Exchange
    {
        var result = ph_fetch_result()
        let signed = request.signing != nil
        let allowHosts =
            options.allowHosts.isEmpty || signed ? nil : options.allowHosts.sorted().joined(separator: ",")
        let validators = request.validators
        let strings = [
            request.url.url, options.userAgent, options.protocols, options.redirectProtocols, validators?.etag,
            validators?.lastModified, request.url.host, allowHosts, request.signing?.signingProvider,
            request.signing?.credentials, request.signing?.sessionToken, request.method, request.contentType,
            request.extraHeader,
            request.traceHeaderLines,
        ]
        let upload = request.upload ?? []
        withCStrings(strings) { c in
            upload.withUnsafeBufferPointer { body in
                var o = ph_fetch_options()
                o.url = c[0]
                o.user_agent = c[1]
                o.protocols = signed ? nil : c[2]
                o.redirect_protocols = c[3]
                o.connect_timeout_ms = Int(options.connectTimeout * 1000)
                o.timeout_ms = Int(options.timeout * 1000)
                o.max_redirects = signed ? 0 : options.maxRedirects
                o.max_bytes = Int64(options.maxBytes)
                o.share = share.handle
                o.cancel = cancel.handle
                o.if_none_match = c[4]
                o.if_modified_since = c[5]
                o.low_speed_limit = options.lowSpeedLimit
                o.low_speed_time = Int(options.lowSpeedTime.rounded(.up))
                o.block_private = options.blockPrivate && !signed ? 1 : 0
                o.allow_loopback = options.allowLoopback ? 1 : 0
                o.max_header_bytes = Int64(options.maxHeaderBytes)
                o.expected_host = c[6]
                o.expected_port = request.url.port ?? -1
                o.allowed_hosts = c[7]
                o.aws_sigv4 = c[8]
                o.aws_credentials = c[9]
                o.aws_session_token = c[10]
                o.method = c[11]
                o.upload = request.upload == nil ? nil : body.baseAddress
                o.upload_length = body.count
                o.content_type = c[12]
                o.extra_header = c[13]
                o.trace_headers = c[14]
                ph_fetch(&o, &result)
            }
        }
        defer { ph_fetch_result_free(&result) }
        let conditional = validators.map { !$0.isEmpty } ?? false
        let notModified = conditional && result.curl_code == Int32(CURLE_OK.rawValue) && result.http_status == 304
        if let error = transportFailure(of: result, options: options) { throw error }
        var length = 0
        let body = ph_fetch_take_body(&result, &length)
        let bytes = ImageBytes(adopting: body, count: length) { free($0) }
        let hints = result.http_status == 0 ? nil : HTTPCacheHeaders.hints(result.cache, now: Double(time(nil)))
        let status = result.http_status
        var failure: PipelineError?
        if !notModified, status != 0, !(200..<300).contains(status) {
            let retryAfter = result.retry_after >= 0 ? Double(result.retry_after) : nil
            failure =
                signed
                ? S3Failure.error(status: status, body: bytes.array, bucket: request.bucket, retryAfter: retryAfter)
                : PipelineError(
                    .httpStatus, "HTTP \(status)", details: FetchFailure(httpStatus: status, retryAfter: retryAfter))
        }
        return Exchange(
            status: status, bytes: bytes, contentType: result.content_type.map { String(cString: $0) }, hints: hints,
            notModified: notModified, failure: failure)
    }

    private static func transportFailure(of r: ph_fetch_result, options: FetchOptions) -> PipelineError? {
        if r.cancelled != 0 { return .cancelled("transfer cancelled") }
        if r.blocked != 0 {
            return PipelineError(.blocked, "refused to connect to \(text(r.blocked_address)): block_private is on")
        }
        if r.misread != 0 {
            return PipelineError(.invalidSource, "ambiguous source: libcurl reads the host as \(text(r.refused_host))")
        }
        if r.host_refused != 0 {
            return PipelineError(
                .blocked,
                "refused to fetch from \(text(r.refused_host)): not in allow_hosts (after \(r.redirects) redirects)")
        }
        if r.headers_too_large == 2 {
            return PipelineError(
                .tooLarge, "response headers larger than libcurl accepts (100 KB a line, 300 KB in all)")
        }
        if r.headers_too_large != 0 {
            return PipelineError(
                .tooLarge, "response headers larger than max_header_bytes (\(options.maxHeaderBytes) bytes)")
        }
        if r.too_large != 0 {
            return PipelineError(.tooLarge, "body larger than max_bytes (\(options.maxBytes) bytes)")
        }
        let code = r.curl_code
        if code != Int32(CURLE_OK.rawValue) {
            let message = text(r.error)
            let detail = message.isEmpty ? String(cString: curl_easy_strerror(CURLcode(UInt32(code)))) : message
            switch UInt32(code) {
            case CURLE_OPERATION_TIMEDOUT.rawValue:
                return PipelineError(.timeout, "timed out (\(detail))", details: FetchFailure(curlCode: Int(code)))
            case CURLE_UNSUPPORTED_PROTOCOL.rawValue where r.redirects > 0:
                return PipelineError(
                    .invalidSource, "redirect to a scheme that is not allowed (\(detail))",
                    details: FetchFailure(curlCode: Int(code)))
            case CURLE_TOO_MANY_REDIRECTS.rawValue:
                return PipelineError(
                    .transport, "too many redirects (more than \(options.maxRedirects))",
                    details: FetchFailure(curlCode: Int(code)))
            case CURLE_UNSUPPORTED_PROTOCOL.rawValue, CURLE_URL_MALFORMAT.rawValue:
                return PipelineError(.invalidSource, detail, details: FetchFailure(curlCode: Int(code)))
            case CURLE_FILE_COULDNT_READ_FILE.rawValue:
                return PipelineError(
                    .invalidSource, "cannot read the file (\(detail))", details: FetchFailure(curlCode: Int(code)))
            default:
                return PipelineError(
                    .transport, "\(detail) (curl error \(code))", details: FetchFailure(curlCode: Int(code)))
            }
        }
        return nil
    }
}

/// The process-wide share handle. libcurl's share is made thread-safe by the lock callbacks in
/// ph_curl.c, and the handle itself is never reassigned, hence @unchecked Sendable.
final class CurlShare: @unchecked Sendable {
    let handle: OpaquePointer?

    init() {
        _ = CurlShare.globalInit
        handle = ph_curl_share_new()
    }

    private static let globalInit: Int32 = ph_curl_global_init()
}

/// An atomic flag (C11 atomic_int in ph_curl.c) set from the cancellation handler and read by
/// curl's progress callback on the transfer thread.
final class CancelFlag: @unchecked Sendable {
    let handle: OpaquePointer?
    init() { handle = ph_cancel_flag_new() }
    deinit { ph_cancel_flag_free(handle) }
    func set() { ph_cancel_flag_set(handle) }
}

/// The text in a fixed-size C char array (imported as a tuple), up to its NUL.
private func text<Array>(_ array: Array) -> String {
    withUnsafeBytes(of: array) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
}
