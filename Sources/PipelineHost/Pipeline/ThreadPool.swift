#if canImport(Glibc)
    import Glibc
#endif

/// Threads of its own for one kind of blocking work. Dispatch's global pool is shared by every
/// kind: on Linux it grows slowly under blocked threads, so 16 transfers trickling from slow
/// origins made a disk-cache hit wait seconds. Here a job never waits behind another kind's.
///
/// A thread is started when a job finds no idle one (up to `maxThreads`), and ends after
/// `idleSeconds` without work, so a pool costs nothing at rest. The queue is guarded by a
/// pthread mutex and condition, which ThreadSanitizer sees.
final class ThreadPool: @unchecked Sendable {
    let name: String
    let maxThreads: Int
    private let idleSeconds: Int
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0
    private var threads = 0
    private var idle = 0

    init(name: String, maxThreads: Int, idleSeconds: Int = 5) {
        self.name = name
        self.maxThreads = max(1, maxThreads)
        self.idleSeconds = idleSeconds
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(wake, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    // Pools live as long as the process: every thread holds its pool.

    /// Runs `job` on one of the pool's threads, as soon as one is free.
    func submit(_ job: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(mutex)
        jobs.append(job)
        let start = jobs.count - head > idle && threads < maxThreads
        if start { threads += 1 }
        pthread_cond_signal(wake)
        pthread_mutex_unlock(mutex)
        if start { spawn() }
    }

    private func spawn() {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setstacksize(&attributes, 8 << 20)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let started = pthread_create(
            &thread, &attributes,
            { context in
                let pool = Unmanaged<ThreadPool>.fromOpaque(context!).takeRetainedValue()
                pool.work()
                return nil
            }, context)
        pthread_attr_destroy(&attributes)
        if started != 0 {
            Unmanaged<ThreadPool>.fromOpaque(context).release()
            pthread_mutex_lock(mutex)
            threads -= 1
            pthread_mutex_unlock(mutex)
        }
    }

    /// A thread's loop: take the oldest job, run it outside the lock; end after idling.
    private func work() {
        pthread_mutex_lock(mutex)
        while true {
            while head == jobs.count {
                var deadline = timespec()
                clock_gettime(CLOCK_MONOTONIC, &deadline)
                deadline.tv_sec += idleSeconds
                idle += 1
                let waited = pthread_cond_timedwait(wake, mutex, &deadline)
                idle -= 1
                if waited == ETIMEDOUT, head == jobs.count {
                    threads -= 1
                    pthread_mutex_unlock(mutex)
                    return
                }
            }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 1024, head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            pthread_mutex_unlock(mutex)
            job()
            pthread_mutex_lock(mutex)
        }
    }
}
