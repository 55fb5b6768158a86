import PipelineHost

/// serve's defaults, each in one place: `ServeSettings`' initializer and the command line's
/// flags both read them, so an embedder and an operator get the same service.
public enum ServeDefaults {
    /// Loopback: a service meant to be reached from outside says so.
    public static let host = "127.0.0.1"
    public static let port = 8080
    /// Image requests admitted at once.
    public static let maxQueue = 256
    public static let drainSeconds = 10.0
    public static let requestSeconds = 30.0
    public static let headSeconds = 10.0
    public static let idleSeconds = 60.0
    public static let sendSeconds = 30.0
    /// 8 KB a second (64 kbit/s): below what a phone on a poor mobile link takes, and a client
    /// that holds a connection must spend that much of the attacker's bandwidth on it.
    public static let minimumSendRate = 8 << 10
    /// Open connections at most (the command line lowers it to fit the open-file limit).
    public static let maxConnections = 4096
    /// Cache-Control max-age for results whose freshness nothing set.
    public static let maxAge = 3600
    /// Transfers at once, over all hosts: a service waits on many slow origins at once, so far
    /// more than a batch's `PipelineConfiguration.defaultTransfers`.
    public static let transfers = 64
    /// Transfers at once to one host.
    public static let transfersPerHost = 8

    /// The shared pipeline's slots with serve's transfer defaults.
    public static var pipeline: PipelineConfiguration {
        PipelineConfiguration(transfers: transfers, transfersPerHost: transfersPerHost)
    }
}
