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
        let keys = await StageRun.sourceKeys(
            of: sources, in: profiles, settings: configuration.cache, logger: logger, blocking: blocking.io)
        return await purge(SourcePurge(sourceKeys: keys), announce: announce)
    }

    /// Records the purge and, in the same turn of the actor, detaches the source's work in
    /// flight, so no claim can come between the two; then carries the purge out.
    private func purge(_ purge: SourcePurge, announce: Bool) async -> PurgeReport {
        let recorded = cache.record(purge)
        if inFlight.detach(where: purge.matches) > 0 {
            logger.debug("work on a purged source goes on for its waiters only")
        }
        let directories = profiles.cacheDirectories(settings: configuration.cache)
        return await cache.purge(recorded, directories: directories, announce: announce)
    }

    /// Has the tiers that hear other nodes' purges hand them to this pipeline, which carries
    /// each out without announcing it again (the shared tiers too, so a store this node's own
    /// earlier work had under way goes as well), and logs how it went.
    nonisolated func listenForAnnouncedPurges() {
        for tier in cache.purgeAnnouncers {
            tier.onAnnouncedPurge { [weak self, logger] purge in
                guard let report = await self?.purge(purge, announce: false) else { return }
                report.logAnnounced(purge, to: logger)
            }
        }
    }
}
