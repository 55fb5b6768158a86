import ArgumentParser
import PipelineHost
import PipelineHostObjectStore
import PipelineHostRedis

#if canImport(Glibc)
    import Glibc
#endif

/// The cache flags of `run`, turned into the pipeline's `CacheSettings`.
struct CacheOptions: ParsableArguments {
    @Option(
        name: .customLong("cache-dir"),
        help: ArgumentHelp(
            "Disk cache directory. Wins over a profile's dir (default: $XDG_CACHE_HOME/pipelinehost, else ~/.cache/pipelinehost).",
            valueName: "dir"))
    var directory: String?

    @Option(
        name: .customLong("cache-size"),
        help: ArgumentHelp(
            "Most the disk cache may take, such as 500M or 2G; least recently used entries go first.", valueName: "size"
        ))
    var size = ByteCount(CacheSettings.defaultDiskLimit)

    @Option(
        name: .customLong("shared-cache"),
        help: ArgumentHelp(
            "A Redis server shared by every node and run that names it, looked in after memory and disk (default: $PIPELINEHOST_REDIS).",
            discussion:
                "For a Redis Cluster, name some of its nodes: redis+cluster://host:port,host:port (the rest is learnt from them). The password comes from $PIPELINEHOST_REDIS_PASSWORD (a wrong one exits 2 at start). With $PIPELINEHOST_SHARED_SECRET (32 bytes or more, the same on every node) each value is sealed with an HMAC, and one that is not is refused.",
            valueName: "redis[+cluster]://[user@]host:port[/db]"))
    var sharedCache: String?

    @Option(
        name: .customLong("shared-max-entry"),
        help: ArgumentHelp(
            "The largest original the shared cache keeps (variants are always kept).", valueName: "size"))
    var sharedMaxEntry = ByteCount(RedisTier.defaultMaxEntryBytes)

    @Option(
        name: .customLong("shared-timeout"),
        help: ArgumentHelp(
            "Milliseconds each shared-cache call may take; a slower Redis counts as down for that call.",
            valueName: "ms"))
    var sharedTimeout = RedisClient.defaultTimeout.wholeMilliseconds

    @Option(
        name: .customLong("shared-wait"),
        help: ArgumentHelp(
            "Seconds to wait for another node that is making the same entry before making it here.",
            valueName: "seconds"))
    var sharedWait = LeaseSettings.defaultWait.seconds

    @Option(
        name: .customLong("shared-lease"),
        help: ArgumentHelp(
            "Seconds a node's claim on an entry lasts unless renewed; others take over when it lapses (its node died).",
            valueName: "seconds"))
    var sharedLease = LeaseSettings.defaultLease.seconds

    @Option(
        name: .customLong("object-store"),
        help: ArgumentHelp(
            "An S3 bucket (and prefix) that keeps what profiles keep on disk, looked in after Redis and before the origin (default: $PIPELINEHOST_OBJECT_STORE).",
            discussion:
                "Credentials, region and endpoint come from the AWS environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (path-style). Writes go in the background; a store that is down or slow costs a miss, never a failed request.",
            valueName: "s3://bucket[/prefix]"))
    var objectStore: String?

    @Option(
        name: .customLong("store-timeout"),
        help: ArgumentHelp("Milliseconds each object-store call may take.", valueName: "ms"))
    var storeTimeout = Int(ObjectStoreTier.defaultTimeout * 1000)

    @Flag(
        name: .customLong("no-cache"),
        help: "Neither look in nor store to any cache, the shared one ($PIPELINEHOST_REDIS) included.")
    var noCache = false

    @Flag(
        name: .long,
        help: "Revalidate cached originals and remake variants (stored entries still serve on_error = \"stale\").")
    var refresh = false

    @Flag(
        name: .long,
        help: "Never transfer: serve only from the cache (stale entries too) and name every source that is missing.")
    var offline = false

    func validate() throws {
        if [noCache, refresh, offline].filter({ $0 }).count > 1 {
            throw ValidationError("use one of --no-cache, --refresh and --offline")
        }
        if noCache, sharedCache != nil {
            throw ValidationError(
                "--no-cache turns every cache off, the shared one too; drop --shared-cache or --no-cache")
        }
        try FlagRange.count(sharedTimeout, "--shared-timeout", in: 1...60_000)
        try FlagRange.count(storeTimeout, "--store-timeout", in: 10...120_000)
        if noCache, objectStore != nil {
            throw ValidationError(
                "--no-cache turns every cache off, the object store too; drop --object-store or --no-cache")
        }
        _ = try leases()
        // The flags and their environment variables, read here so that a bad one is a usage
        // error before anything starts, in the same words whichever gave it.
        _ = try sharedAddress()
        _ = try objectStoreLocation()
    }

    /// A flag's text, else its environment variable's, with the name of whichever gave it; nil
    /// when neither is set (an empty variable is not set).
    private func setting(_ flag: String?, _ flagName: String, environment: String) -> (text: String, from: String)? {
        if let flag { return (flag, flagName) }
        guard let value = getenv(environment).map({ String(cString: $0) }), !value.isEmpty else { return nil }
        return (value, environment)
    }

    var settings: CacheSettings {
        let mode: CacheSettings.Mode = noCache ? .off : refresh ? .refresh : offline ? .offline : .normal
        return CacheSettings(mode: mode, directory: directory, diskLimit: size.bytes)
    }

    /// The shared tier's address: --shared-cache, else PIPELINEHOST_REDIS; nil for none. A bad
    /// PIPELINEHOST_REDIS is a usage error too. The password comes from
    /// PIPELINEHOST_REDIS_PASSWORD; one written in the URL works, with a warning that it is
    /// visible to every user of the machine.
    func sharedAddress() throws -> RedisAddress? {
        guard !noCache, let (text, from) = setting(sharedCache, "--shared-cache", environment: "PIPELINEHOST_REDIS")
        else { return nil }
        guard let address = RedisAddress(text) else {
            throw ValidationError(
                "\(from) takes redis://[user@]host:port[/db] or redis+cluster://[user@]host:port[,host:port...] (the password in PIPELINEHOST_REDIS_PASSWORD), not \(Redactor.redact(text))"
            )
        }
        return address.withPassword(getenv("PIPELINEHOST_REDIS_PASSWORD").map { String(cString: $0) })
    }

    /// Exits 2 when the shared tier's Redis refuses its credentials or wants some: a
    /// configuration error, found at start. An unreachable Redis is not one. Warns about a
    /// password written in --shared-cache.
    func checkSharedCredentials() async throws {
        guard let address = try sharedAddress() else { return }
        if address.passwordInURL, sharedCache != nil {
            printError(
                "warning: the Redis password in --shared-cache is visible to every user of this machine (ps); set PIPELINEHOST_REDIS_PASSWORD instead"
            )
        }
        if let problem = await sharedClient(address).credentialProblem() {
            throw usageError("\(problem)")
        }
    }

    /// Refuses tier time limits that a request's deadline would cut short. A request that misses
    /// every tier while they hang waits, at worst, two calls on each tier after disk (its
    /// variant's cache point and its original's) and one wait for another node's work; at or
    /// past `requestTimeout` (seconds), a hung Redis or store would fail requests (504) instead
    /// of costing them time, as the tiers promise.
    func checkTierWaits(against requestTimeout: Double) throws {
        var parts: [String] = []
        var total = 0.0
        if try sharedAddress() != nil {
            total += 2 * Double(sharedTimeout) / 1000 + sharedWait
            parts.append("2 × --shared-timeout \(sharedTimeout) ms + --shared-wait \(sharedWait) s")
        }
        if try objectStoreLocation() != nil {
            total += 2 * Double(storeTimeout) / 1000
            parts.append("2 × --store-timeout \(storeTimeout) ms")
        }
        guard total >= requestTimeout else { return }
        throw ValidationError(
            "a request that misses every cache tier may wait \(total) s on tiers that hang "
                + "(\(parts.joined(separator: " + "))), not less than --request-timeout \(requestTimeout) s: "
                + "a hung tier would fail requests instead of slowing them; lower those or raise --request-timeout")
    }

    /// The object store's place: --object-store, else PIPELINEHOST_OBJECT_STORE; nil for none.
    func objectStoreLocation() throws -> ObjectStoreLocation? {
        guard !noCache,
            let (text, from) = setting(objectStore, "--object-store", environment: "PIPELINEHOST_OBJECT_STORE")
        else { return nil }
        guard let location = ObjectStoreLocation(text) else {
            throw ValidationError("\(from) takes s3://bucket or s3://bucket/prefix, not \(Redactor.redact(text))")
        }
        return location
    }

    var leaseSettings: LeaseSettings { (try? leases()) ?? LeaseSettings() }

    private func leases() throws -> LeaseSettings {
        LeaseSettings(
            lease: try FlagRange.seconds(sharedLease, "--shared-lease", in: 0.1...3600),
            wait: try FlagRange.seconds(sharedWait, "--shared-wait", in: 0...3600))
    }
}
