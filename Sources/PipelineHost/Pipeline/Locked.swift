#if canImport(Glibc)
    import Glibc
#endif

/// A value behind a pthread mutex: the state of cache tiers, counters and the disk writer, which
/// are used from the actor and from pool threads alike. Public, so a cache tier or plugin of a
/// host's own can guard its state the same way.
///
/// Not Synchronization's `Mutex`: on Linux it waits with futexes inside the uninstrumented
/// standard library, so ThreadSanitizer cannot see it order accesses and reports races that are
/// not there. scripts/test runs the pipeline tests under ThreadSanitizer.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    /// A value behind its own lock.
    public init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, under the lock. `body` must not block or take this lock again.
    public func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
