import Logging

/// Running one stage, or a request's key stages, with whatever they throw made a
/// `PipelineError`. Nothing here touches the pipeline's state, so it lives outside the actor.
enum StageRun {
    /// Runs one stage off the actor.
    static func run(_ configured: ConfiguredStage, on input: StageValue, in context: StageContext) async
        -> Result<StageValue, PipelineError>
    {
        do {
            try context.checkCancellation()
            return .success(try await configured.stage.run(input, in: context))
        } catch {
            return .failure(PipelineError(thrown: error, by: configured.name))
        }
    }

    /// Runs one step of a chain once it has its slot, and counts it: the value it gives carries
    /// the previous step's timings, and its own (time in the queue since `queued`, and run).
    static func step(
        _ configured: ConfiguredStage, after previous: StepValue, in context: StageContext,
        queuedAt queued: ContinuousClock.Instant, counters: PipelineCounters, wall: WallClock
    ) async -> StepOutcome {
        let clock = ContinuousClock()
        let started = clock.now
        let role = configured.definition.role
        if role == .fetch { counters.add(\.fetches) }
        let result = await run(configured, on: previous.value, in: context)
        let ran = clock.now - started
        switch result {
        case .failure(let error):
            return .failure(error)
        case .success(let value):
            counters.stageRan(configured.name, role: role, input: previous.value, output: value, time: ran)
            let timing = PipelineResult.StageTiming(stage: configured.name, waited: started - queued, duration: ran)
            return .success(previous.carrying(value, timings: previous.timings + [timing], now: wall.now))
        }
    }

    /// A request's chain: its plan, and its key stages run. Errors name the source (redacted).
    static func chain(
        for request: ImageRequest, in profiles: ProfileSet, settings: CacheSettings, logger: Logger,
        blocking: BlockingExecutor
    ) async -> Result<(chain: Chain, keyTimings: [PipelineResult.StageTiming]), PipelineError> {
        let plan: RequestPlan
        do {
            plan = try RequestPlan(request, in: profiles)
        } catch {
            return .failure(error.from(profiles.redaction(request.source)))
        }
        let source: Source, keyTimings: [PipelineResult.StageTiming]
        switch await keyStages(request, plan, logger: logger, blocking: blocking) {
        case .success(let keyed): (source, keyTimings) = keyed
        case .failure(let error): return .failure(error.from(profiles.redaction(request.source)))
        }
        let chain = Chain(source: source, plan: plan, settings: settings, profileFile: profiles.file)
        guard !chain.steps.isEmpty else {
            return .failure(
                PipelineError(
                    .profile, "profile \"\(request.profile)\" has no stage after its key stages",
                    source: source.redacted))
        }
        return .success((chain, keyTimings))
    }

    /// Every key a purge of `sources` must reach: each source as written, and its source key
    /// under each profile (what the profile's key stages make of it).
    static func sourceKeys(
        of sources: [String], in profiles: ProfileSet, settings: CacheSettings, logger: Logger,
        blocking: BlockingExecutor
    ) async -> Set<String> {
        var keys = Set(sources)
        for source in sources {
            for profile in profiles.profiles {
                let request = ImageRequest(source: source, profile: profile.name)
                if case .success(let planned) = await chain(
                    for: request, in: profiles, settings: settings, logger: logger, blocking: blocking)
                {
                    keys.insert(planned.chain.source.key)
                }
            }
        }
        return keys
    }

    /// Runs a request's key stages, which only rewrite the source; they are cheap and run inline.
    static func keyStages(_ request: ImageRequest, _ plan: RequestPlan, logger: Logger, blocking: BlockingExecutor)
        async
        -> Result<(source: Source, timings: [PipelineResult.StageTiming]), PipelineError>
    {
        let clock = ContinuousClock()
        var source = Source(location: request.source)
        source.shownSecrets = plan.secretNames
        // One reading of a source for every reader: what the key would be made from must be
        // what the transfer connects to, so a source either reads alike everywhere or runs nothing.
        if let ambiguity = SourceLocation(request.source).ambiguity {
            return .failure(PipelineError(.invalidSource, "ambiguous source: \(ambiguity)").from(source.redacted))
        }
        var timings: [PipelineResult.StageTiming] = []
        for configured in plan.keyStages {
            let started = clock.now
            let outcome: Result<StageValue, PipelineError>
            if let rewriter = configured.rewriter {
                outcome = rewrite(source, with: rewriter, name: configured.name)
            } else {
                outcome = await run(
                    configured, on: .source(source),
                    in: StageContext(source: source, logger: logger, blocking: blocking))
            }
            switch outcome {
            case .success(.source(let updated)): source = updated
            case .success:
                return .failure(PipelineError(.stageFailed, "\(configured.name): a key stage must give a source"))
            case .failure(let error): return .failure(error.from(source.redacted))
            }
            timings.append(.init(stage: configured.name, duration: clock.now - started))
        }
        return .success((source, timings))
    }

    /// A synchronous key stage, in place.
    private static func rewrite(_ source: Source, with rewriter: any SourceRewriter, name: String) -> Result<
        StageValue, PipelineError
    > {
        do {
            return .success(.source(try rewriter.rewrite(source)))
        } catch {
            return .failure(PipelineError(thrown: error, by: name))
        }
    }
}

extension PipelineResult {
    /// A request's result from its final step's value, which holds encoded bytes. (The loader's
    /// chain check makes any other value unreachable for loaded profiles.)
    static func finished(
        _ request: ImageRequest, origin: Source, key: StageKey, keyTimings: [PipelineResult.StageTiming] = [],
        _ value: StepValue
    ) -> Result<PipelineResult, PipelineError> {
        guard case .encoded(let encoded) = value.value else {
            return .failure(
                PipelineError(
                    .profile, "profile \"\(request.profile)\" did not end in encoded bytes", source: origin.redacted))
        }
        return .success(
            PipelineResult(
                request: request, origin: origin, stageKey: key,
                bytes: encoded.bytes, format: encoded.format, size: encoded.size, sourceSize: encoded.sourceSize,
                timings: keyTimings + value.timings, coalesced: value.coalesced,
                memoryHit: value.memoryHit, diskHit: value.diskHit, sharedHit: value.sharedHit,
                sharedTier: value.sharedTier, stale: value.stale,
                expiresAt: value.expiresAt, noStore: value.noStore))
    }
}

extension Pipeline {
    /// The stable key of a request's source: what its key stages (normalize) make of it. Requests
    /// with equal source keys share their download when they run at the same time. (No state of
    /// the actor's: the key stages run inline, as for every request.)
    public nonisolated func sourceKey(for request: ImageRequest) async throws(PipelineError) -> String {
        try await StageRun.keyStages(request, RequestPlan(request, in: profiles), logger: logger, blocking: blocking.io)
            .get().source.key
    }
}
