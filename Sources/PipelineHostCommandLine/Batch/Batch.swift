import PipelineHost

/// Runs many requests through one pipeline and reports each result as it arrives.
///
/// Requests whose sources have the same stable key (the same image behind different auth
/// salts, or one source under several profiles) form a group and are started together, so
/// they share one download and every stage they have in common.
struct Batch: Sendable {
    /// Results in progress at once when --jobs is not given: enough to keep transfers and CPU
    /// stages busy.
    static let defaultJobs = max(8, 4 * PipelineConfiguration.cores)

    /// What the batch itself knows at the end; results are counted by whoever handles them.
    struct Ending: Sendable {
        /// Requests never started because the batch was cancelled.
        var notStarted = 0
        var interrupted = false
    }

    let pipeline: Pipeline
    let groups: [[ImageRequest]]
    /// Requests in progress at once; a group is started whole once there is room.
    let window: Int

    /// Groups `requests` by source key, in order of first appearance. A request whose key
    /// cannot be made (an invalid URL) goes alone, and reports its error when it runs.
    static func grouped(_ requests: [ImageRequest], in pipeline: Pipeline, window: Int) async -> Batch {
        var order: [String] = []
        var groups: [String: [ImageRequest]] = [:]
        for (index, request) in requests.enumerated() {
            let key = (try? await pipeline.sourceKey(for: request)) ?? "unkeyed #\(index)"
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(request)
        }
        return Batch(pipeline: pipeline, groups: order.map { groups[$0]! }, window: window)
    }

    /// Runs every group, handing each outcome to `handle` on this task, one at a time. Cancelling
    /// this task cancels the requests in progress and starts no more.
    func run(_ handle: (ImageRequest, Result<PipelineResult, PipelineError>) async -> Void) async -> Ending {
        var ending = Ending()
        await withTaskGroup(of: Outcome.self) { group in
            var next = 0
            var running = 0
            while true {
                while next < groups.count, running < window, !Task.isCancelled {
                    await start(groups[next], in: &group)
                    running += groups[next].count
                    next += 1
                }
                guard let (request, outcome) = await group.next() else { break }
                running -= 1
                await handle(request, outcome)
            }
            ending.notStarted = groups[next...].reduce(0) { $0 + $1.count }
        }
        ending.interrupted = Task.isCancelled
        return ending
    }

    typealias Outcome = (ImageRequest, Result<PipelineResult, PipelineError>)

    /// The end every batch command shares: runs `write` (which runs the batch and writes its
    /// results) until it ends, or until SIGINT, SIGTERM or a closed standard output cancels it;
    /// then stores what the pipeline made (the next run looks for it on disk) and, when standard
    /// output was closed, exits as a shell expects (`BrokenPipe`). Returns what `write` returned.
    static func finishing<Written: Sendable>(
        _ pipeline: Pipeline, _ write: @escaping @Sendable () async -> Written
    ) async -> Written {
        let work = Task { await write() }
        let watcher = SignalWatcher { work.cancel() }
        BrokenPipe.whenBroken { work.cancel() }
        let written = await work.value
        await pipeline.flushCache()
        withExtendedLifetime(watcher) {}
        if BrokenPipe.isBroken { BrokenPipe.exitAsDefault() }
        return written
    }

    /// Starts one group. Its first request starts alone, and its twins once that request's work
    /// is registered, so they share it however the tasks happen to be scheduled.
    private func start(_ members: [ImageRequest], in group: inout TaskGroup<Outcome>) async {
        let (first, twins) = (members[0], members.dropFirst())
        let (registered, signal) = AsyncStream<Void>.makeStream()
        let finish: @Sendable () -> Void = { signal.finish() }
        let joinable = twins.isEmpty ? nil : finish
        let pipeline = pipeline
        group.addTask { (first, await Self.outcome(of: first, in: pipeline, joinable: joinable)) }
        guard !twins.isEmpty else { return }
        for await _ in registered {}
        for request in twins {
            group.addTask { (request, await Self.outcome(of: request, in: pipeline)) }
        }
    }

    private static func outcome(
        of request: ImageRequest, in pipeline: Pipeline,
        joinable: (@Sendable () -> Void)? = nil
    ) async -> Result<PipelineResult, PipelineError> {
        do {
            return .success(try await pipeline.image(for: request, joinable: joinable))
        } catch {
            return .failure(error)
        }
    }
}
