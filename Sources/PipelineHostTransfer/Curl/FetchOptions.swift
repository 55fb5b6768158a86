import PipelineHost

/// What bounds one libcurl transfer: time, size, redirects, schemes, and the address guard.
/// The fetch stage reads them from its parameters; the object-store client has its own.
package struct FetchOptions: Sendable {
    package var timeout: Double
    package var connectTimeout: Double
    package var lowSpeedLimit: Int
    package var lowSpeedTime: Double
    package var maxBytes: Int
    package var maxHeaderBytes: Int
    package var maxRedirects: Int
    package var schemes: Set<String>
    package var blockPrivate: Bool
    package var allowLoopback: Bool
    /// Lower-cased; empty allows any host.
    package var allowHosts: Set<String>
    package var userAgent: String

    package init(
        timeout: Double, connectTimeout: Double, lowSpeedLimit: Int, lowSpeedTime: Double, maxBytes: Int,
        maxHeaderBytes: Int, maxRedirects: Int, schemes: Set<String>, blockPrivate: Bool, allowLoopback: Bool,
        allowHosts: Set<String>, userAgent: String
    ) {
        self.timeout = timeout
        self.connectTimeout = connectTimeout
        self.lowSpeedLimit = lowSpeedLimit
        self.lowSpeedTime = lowSpeedTime
        self.maxBytes = maxBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxRedirects = maxRedirects
        self.schemes = schemes
        self.blockPrivate = blockPrivate
        self.allowLoopback = allowLoopback
        self.allowHosts = allowHosts
        self.userAgent = userAgent
    }

    /// The options of the object-store client: a short timeout, no address guard, no redirects.
    init(timeout: Double, maxBytes: Int) {
        self.init(
            timeout: timeout, connectTimeout: min(timeout, 2), lowSpeedLimit: 0, lowSpeedTime: 1, maxBytes: maxBytes,
            maxHeaderBytes: 131_072, maxRedirects: 0, schemes: ["http", "https"], blockPrivate: false,
            allowLoopback: false, allowHosts: [], userAgent: "pipelinehost/0.1 (libcurl)")
    }

    /// curl's protocol lists: the first URL may use any allowed scheme, a redirect only http(s).
    /// (s3 is not one of curl's: its transfers go to the endpoint over http or https.)
    var protocols: String { FetchURL.curlSchemes.filter(schemes.contains).sorted().joined(separator: ",") }
    var redirectProtocols: String {
        let web = schemes.intersection(["http", "https"]).sorted().joined(separator: ",")
        return web.isEmpty ? "http" : web  // file alone: no redirects happen
    }
}
