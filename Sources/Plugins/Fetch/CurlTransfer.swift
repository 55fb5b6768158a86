import CCurl
import Glibc
import PipelineHost

/// One libcurl transfer run on a blocking thread, cancelled through the progress callback.
enum CurlTransfer {
    struct Body: Sendable {
        let bytes: ImageBytes
        let contentType: String?
        /// nil for file:// (no headers).
        let hints: CacheHints?
        /// 304 to a conditional request: `bytes` is empty and the stored copy is still good.
        let notModified: Bool
    }

    /// One connection pool (a curl share handle: connections, DNS and TLS sessions) per address
    /// guard setting, reused across transfers and threads. The address check runs only when a
    /// connection is opened, so a transfer must never reuse one opened under a looser guard:
    /// `block_private` with `allow_loopback` may connect to 127.0.0.1, and a strict profile in
    /// the same process must not be handed that connection.
    private static let unguardedPool = CurlShare()
    private static let strictPool = CurlShare()
    private static let loopbackPool = CurlShare()

    static func pool(for options: FetchOptions) -> CurlShare {
        guard options.blockPrivate else { return unguardedPool }
        return options.allowLoopback ? loopbackPool : strictPool
    }

    static func fetch(_ url: FetchURL.Resolved, validators: Validators?, options: FetchOptions, context: StageContext)
        async throws -> Body
    {
        let flag = CancelFlag()
        let share = pool(for: options)
        return try await withTaskCancellationHandler {
            try await context.runBlocking {
                try perform(url, validators: validators, options: options, share: share, cancel: flag)
            }
        } onCancel: {
            flag.set()
        }
    }

    private static func perform(
        _ url: FetchURL.Resolved, validators: Validators?, options: FetchOptions, share: CurlShare,
        cancel: CancelFlag
    ) throws(PipelineError) -> Body {
        var result = ph_fetch_result()
        let allowHosts = options.allowHosts.isEmpty ? nil : options.allowHosts.sorted().joined(separator: ",")
        let strings = [
            url.url, options.userAgent, options.protocols, options.redirectProtocols, validators?.etag,
            validators?.lastModified, url.host, allowHosts,
        ]
        withCStrings(strings) { c in
            var request = ph_fetch_options(
                url: c[0], user_agent: c[1], protocols: c[2], redirect_protocols: c[3],
                connect_timeout_ms: Int(options.connectTimeout * 1000), timeout_ms: Int(options.timeout * 1000),
                max_redirects: options.maxRedirects, max_bytes: Int64(options.maxBytes),
                share: share.handle, cancel: cancel.handle, if_none_match: c[4], if_modified_since: c[5],
                low_speed_limit: options.lowSpeedLimit, low_speed_time: Int(options.lowSpeedTime.rounded(.up)),
                block_private: options.blockPrivate ? 1 : 0, allow_loopback: options.allowLoopback ? 1 : 0,
                max_header_bytes: Int64(options.maxHeaderBytes),
                expected_host: c[6], expected_port: url.port ?? -1, allowed_hosts: c[7])
            ph_fetch(&request, &result)
        }
        defer { ph_fetch_result_free(&result) }
        let conditional = validators.map { !$0.isEmpty } ?? false
        let notModified = conditional && result.curl_code == Int32(CURLE_OK.rawValue) && result.http_status == 304
        if !notModified, let error = failure(of: result, options: options) { throw error }
        var length = 0
        let body = ph_fetch_take_body(&result, &length)
        let bytes = ImageBytes(adopting: body, count: length) { free($0) }
        let hints = result.http_status == 0 ? nil : HTTPCacheHeaders.hints(result.cache, now: Double(time(nil)))
        return Body(
            bytes: notModified ? ImageBytes(copying: []) : bytes,
            contentType: result.content_type.map { String(cString: $0) }, hints: hints, notModified: notModified)
    }

    private static func failure(of r: ph_fetch_result, options: FetchOptions) -> PipelineError? {
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
        let status = r.http_status
        if status != 0, !(200..<300).contains(status) {
            return PipelineError(
                .httpStatus, "HTTP \(status)",
                details: FetchFailure(httpStatus: status, retryAfter: r.retry_after >= 0 ? Double(r.retry_after) : nil))
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
