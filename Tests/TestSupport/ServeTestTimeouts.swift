/// Time limits for the serve a test starts, as a process (`ServeProcess`) or in-process
/// (`ServeSettings`), where the test does not set its own.
public enum ServeTestTimeouts {
    /// Seconds a request may take: longer than any event a test waits for (`eventually` gives up
    /// after 300 s). serve's default of 30 s is a clock that a test holding a request at a gate
    /// can lose on a busy machine: a twin request that took longer than that to join found its
    /// leader answered 504 and gone, and fetched again (ServeTracingTests).
    public static let requestSeconds = 600

    /// Seconds a connection to a serve a test starts in-process may wait for a request's head, or
    /// stay idle between requests. Such a test opens its connection, then makes its requests, and
    /// on a busy machine the gap outlasted serve's 10-second head timeout: the server closed the
    /// connection and the next request failed with "I/O on closed channel" (2026-11-30). The
    /// tests of those timeouts set their own.
    public static let connectionSeconds = 600
}
