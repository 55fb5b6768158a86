/// Time limits for the serve a test starts, as a process (`ServeProcess`) or in-process
/// (`ServeSettings`), where the test does not set its own.
public enum ServeTestTimeouts {
    /// Seconds a request may take: longer than any event a test waits for (`eventually` gives up
    /// after 300 s). serve's default of 30 s is a clock that a test holding a request at a gate
    /// can lose on a busy machine: a twin request that took longer than that to join found its
    /// leader answered 504 and gone, and fetched again (ServeTracingTests).
    public static let requestSeconds = 600
}
