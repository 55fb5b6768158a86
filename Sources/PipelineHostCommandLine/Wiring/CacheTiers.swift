import Logging
import PipelineHost
import PipelineHostObjectStore
import PipelineHostRedis
import PipelineHostServe

#if canImport(Glibc)
    import Glibc
#endif

/// The cache tiers after memory and disk, built from the cache flags in one place for every
/// command: serve hands the factories its metrics backend and logger, run, info and purge call
/// them through `settingsWithSharedTier()`.
extension CacheOptions {
    /// The settings with the tiers after memory and disk added (the shared one, then the object
    /// store), for run, info and purge. They come from the same factories serve hands its own
    /// metrics backend and logger, so every command builds a tier one way.
    func settingsWithSharedTier() throws -> CacheSettings {
        var settings = settings
        if let makeShared = try sharedTierFactory() {
            settings.additionalTiers.append(makeShared(nil, Logger(label: "pipelinehost.shared")))
        }
        if let makeStore = try objectStoreFactory() {
            settings.additionalTiers.append(makeStore(nil, Logger(label: "pipelinehost.store")))
        }
        return settings
    }

    /// The object-store tier, made with a caller's metrics and logger; nil for none. Missing or
    /// malformed AWS credentials are a usage error (exit 2) here, at start.
    func objectStoreFactory() throws -> SharedTierFactory? {
        guard let location = try objectStoreLocation() else { return nil }
        if let problem = ObjectStoreTier.environmentProblem {
            throw usageError("--object-store \(location): \(problem)")
        }
        let (timeout, seal) = (Double(storeTimeout) / 1000, try sharedSeal())
        return { metrics, logger in
            // The environment was checked above and is read once per process.
            ObjectStoreTier(location: location, timeout: timeout, seal: seal, metrics: metrics, logger: logger)!
        }
    }

    /// Serve's shared tier, made with the service's metrics and logger; nil for none.
    func sharedTierFactory() throws -> SharedTierFactory? {
        guard let address = try sharedAddress() else { return nil }
        let client = sharedClient(address)
        let (maxEntry, leases, seal) = (sharedMaxEntry.bytes, leaseSettings, try sharedSeal())
        return { metrics, logger in
            RedisTier(
                client: client, maxEntryBytes: maxEntry, leases: leases, metrics: metrics, logger: logger, seal: seal)
        }
    }

    /// The seal every value in the shared tier carries, from PIPELINEHOST_SHARED_SECRET (at
    /// least 32 bytes); nil when it is not set. Every node of a fleet needs the same one.
    func sharedSeal() throws -> EntrySeal? {
        guard let secret = getenv("PIPELINEHOST_SHARED_SECRET").map({ String(cString: $0) }), !secret.isEmpty else {
            return nil
        }
        guard let seal = EntrySeal(secret: Array(secret.utf8)) else {
            throw usageError(
                "PIPELINEHOST_SHARED_SECRET is shorter than \(EntrySeal.minimumBytes) bytes; make one with openssl rand -hex 32"
            )
        }
        return seal
    }

    /// A client for the shared tier with --shared-timeout.
    func sharedClient(_ address: RedisAddress) -> RedisClient {
        RedisClient(address: address, timeout: .milliseconds(sharedTimeout))
    }

    /// Lease length and wait, from --shared-lease and --shared-wait (checked by `validate`).
}
