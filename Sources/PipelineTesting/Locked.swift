import Foundation

/// A value behind a lock, for fakes' and test helpers' shared state.
///
/// Built on NSLock (a pthread mutex) rather than Synchronization's `Mutex`: on Linux `Mutex`
/// waits with futexes inside the uninstrumented standard library, so ThreadSanitizer cannot see
/// it order accesses and reports races that are not there. scripts/test runs the pipeline tests
/// under ThreadSanitizer, and their helpers must not be the noise.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// A value behind its own lock.
    public init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, under the lock.
    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
