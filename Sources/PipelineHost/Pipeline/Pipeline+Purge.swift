import Logging

extension Pipeline {
    /// Drops every original and variant of `sources` (for every profile of this pipeline and
    /// every option) from memory, from every disk directory the profiles use, and from the tiers
    /// after disk (Redis, the object store). With `announce`, the shared tier tells the other
    /// nodes, which drop their memory and disk copies too.
    ///
    /// A source's entries are those of its source key under each profile (what its normalize
    /// stage makes of it) and of the source as written. Work on the source that began before the
    /// purge finishes for its waiters but stores nothing (`PurgeLedger`), and a request made
    /// after the purge began never joins it: it starts anew. The shared tier gives up this
    /// node's leases of the source, so no node waits for that work either.
    public func purge(sources: [String], announce: Bool = true) async -> PurgeReport {
        var keys = Set(sources)
        for source in sources {
            for profile in profiles.profiles {
                let request = ImageRequest(source: source, profile: profile.name)
                if case .success(let planned) = await StageRun.chain(
                    for: request, in: profiles, settings: configuration.cache, logger: logger, blocking: blocking.io)
                {
                    keys.insert(planned.chain.source.key)
                }
            }
        }
        return await purge(SourcePurge(sourceKeys: keys), announce: announce)
    }

    /// Records the purge and, in the same turn of the actor, detaches the source's work in
    /// flight, so no claim can come between the two; then carries the purge out.
    private func purge(_ purge: SourcePurge, announce: Bool) async -> PurgeReport {
        let recorded = cache.record(purge)
        if inFlight.detach(where: purge.matches) > 0 {
            logger.debug("work on a purged source goes on for its waiters only")
        }
        return await cache.purge(recorded, directories: cacheDirectories, announce: announce)
    }

    /// A purge another node announced: the same, without announcing it again (the shared tiers
    /// too, so a store this node's own earlier work had under way goes as well). A failure says so.
    func purgeAnnounced(_ purge: SourcePurge) async {
        let report = await self.purge(purge, announce: false)
        let metadata: Logger.Metadata = [
            "removed": "\(report.removed.values.reduce(0, +))", "sources": "\(purge.digests.count)",
        ]
        if report.failures.isEmpty {
            logger.info("purged on another node's request", metadata: metadata)
        } else {
            logger.warning(
                "a purge another node asked for failed here: \(report.failures.joined(separator: "; "))",
                metadata: metadata)
        }
    }

    /// Every disk directory this pipeline's profiles keep entries in.
    nonisolated var cacheDirectories: Set<String> {
        var directories = Set<String>()
        guard configuration.cache.mode != .off else { return directories }
        if let directory = configuration.cache.directory { directories.insert(directory) }
        for profile in profiles.profiles {
            guard let plan = try? RequestPlan(ImageRequest(source: "", profile: profile.name), in: profiles) else {
                continue
            }
            for (step, policy) in plan.caches {
                let layer: CacheLayer = plan.steps[step].definition.role == .fetch ? .original : .variant
                let point = CachePoint(
                    policy, layer: layer, settings: configuration.cache, profileFile: profiles.file)
                if let directory = point.directory { directories.insert(directory) }
            }
        }
        return directories
    }

    /// Has the tiers that hear other nodes' purges hand them to this pipeline.
    nonisolated func listenForAnnouncedPurges() {
        for tier in cache.purgeAnnouncers {
            tier.onAnnouncedPurge { [weak self] purge in await self?.purgeAnnounced(purge) }
        }
    }
}
