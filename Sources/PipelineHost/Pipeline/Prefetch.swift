/// Requests running at low priority ahead of need. Cancel it when the need goes away (the
/// user scrolled on); work that a real request has joined meanwhile goes on for that request.
public struct Prefetch: Sendable {
    let task: Task<Int, Never>

    /// Cancels the prefetch: work that nobody else waits for stops.
    public func cancel() { task.cancel() }

    /// Waits for every request to end, and returns how many succeeded.
    public func wait() async -> Int { await task.value }
}

extension Pipeline {
    /// Starts `requests` at low priority, a few at a time so fetched bytes do not pile up
    /// waiting for the CPU. The results land wherever the profile's `cache` stages keep them,
    /// so a later request is a cache hit; a request that comes while a prefetch still runs
    /// joins its work.
    public nonisolated func prefetch(_ requests: [ImageRequest]) -> Prefetch {
        // Enough to keep every transfer and CPU slot busy, and no more.
        let window = configuration.transfers + configuration.cpuStages
        return Prefetch(task: Task(priority: .low) {
            await withTaskGroup(of: Bool.self) { group in
                var succeeded = 0, running = 0, next = 0
                while true {
                    while running < window, next < requests.count, !Task.isCancelled {
                        let request = requests[next]
                        next += 1
                        running += 1
                        group.addTask { (try? await self.image(for: request, priority: .low)) != nil }
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
