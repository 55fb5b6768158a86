/// Requests running at low priority ahead of need. Cancel it when the need goes away (the
/// user scrolled on); work that a real request has joined meanwhile goes on for that request.
public struct Prefetch: Sendable {
    let task: Task<Int, Never>

    /// Cancels the prefetch: work that nobody else waits for stops.
    public func cancel() { task.cancel() }

    /// Waits for every request to end, and returns how many succeeded.
    public func wait() async -> Int { await task.value }
}

extension Prefetch {
    /// Runs `requests` through `run`, `window` at a time, so fetched bytes do not pile up
    /// waiting for the CPU; counts those that succeeded.
    static func start(_ requests: [ImageRequest], window: Int, run: @escaping @Sendable (ImageRequest) async -> Bool)
        -> Prefetch
    {
        Prefetch(
            task: Task(priority: .low) {
                await withTaskGroup(of: Bool.self) { group in
                    var succeeded = 0, running = 0, next = 0
                    while true {
                        while running < window, next < requests.count, !Task.isCancelled {
                            let request = requests[next]
                            next += 1
                            running += 1
                            group.addTask { await run(request) }
                        }
                        guard let ok = await group.next() else { break }
                        running -= 1
                        if ok { succeeded += 1 }
                    }
                    return succeeded
                }
            })
    }
}

/// Prefetching is no state of the actor's: each request is a plain `image(for:)` at low priority.
extension Pipeline {
    /// Starts `requests` at low priority, a few at a time. The results land wherever the
    /// profile's `cache` stages keep them, so a later request is a cache hit; a request that
    /// comes while a prefetch still runs joins its work.
    public nonisolated func prefetch(_ requests: [ImageRequest]) -> Prefetch {
        prefetch(requests) { request in (try? await self.image(for: request, priority: .low)) != nil }
    }

    /// `prefetch(_:)`, each request run by `run` (which says whether it succeeded): a service
    /// admits each one as it admits a client's, and holds it to the same deadline.
    public nonisolated func prefetch(
        _ requests: [ImageRequest], running run: @escaping @Sendable (ImageRequest) async -> Bool
    ) -> Prefetch {
        // Enough to keep every transfer and CPU slot busy, and no more.
        Prefetch.start(requests, window: configuration.transfers + configuration.cpuStages, run: run)
    }
}
