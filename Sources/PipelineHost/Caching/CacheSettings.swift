#if canImport(Glibc)
    import Glibc
#endif

/// How a pipeline caches: the mode, where the disk cache lives, and the limits.
public struct CacheSettings: Sendable {
    /// How the cache stages behave in a run: `normal`, `refresh` (revalidate and remake), `offline` (never transfer) or `off`.
    public enum Mode: String, Sendable {
        /// Serve fresh entries, revalidate stale originals, store what succeeds.
        case normal
        /// Treat every entry as stale: revalidate originals and remake variants. Stored
        /// entries still serve as the last good image for `on_error = "stale"`.
        case refresh
        /// Never transfer: serve whatever is stored, fresh or not (flagged stale), and fail
        /// with `not_cached` for the rest.
        case offline
        /// No lookups and no stores.
        case off
    }

    /// How cache stages behave: normal, refresh, offline or off.
    public var mode: Mode
    /// The disk cache directory. Wins over a profile's `dir`; nil means the profile's, else
    /// `DiskCache.defaultDirectory`.
    public var directory: String?
    /// Bytes the disk cache may take. Checked before every write, so it holds while running.
    public var diskLimit: Int
    /// Limits of the in-memory cache of display-ready variants.
    public var memory: MemoryCache<StageKey>.Limits
    /// Tiers looked in after memory and disk, in order, such as one shared between machines.
    /// A hit there is copied into the tiers before it that keep the entry.
    public var additionalTiers: [any CacheTier]
    /// The time freshness is judged by; tests move a clock of their own instead of sleeping.
    public var clock: WallClock

    /// The disk cache's size when nothing says otherwise (`--cache-size`, `cache prune --max-size`).
    public static let defaultDiskLimit = 1 << 30

    /// Settings for every cache stage of a pipeline; a profile's `dir` is overridden by `directory`.
    public init(
        mode: Mode = .normal, directory: String? = nil, diskLimit: Int = CacheSettings.defaultDiskLimit,
        memory: MemoryCache<StageKey>.Limits = .init(), additionalTiers: [any CacheTier] = [],
        clock: WallClock = .system
    ) {
        self.mode = mode
        self.directory = directory
        self.diskLimit = max(0, diskLimit)
        self.memory = memory
        self.additionalTiers = additionalTiers
        self.clock = clock
    }
}

/// A `cache` stage in a request's chain, resolved: what it stores and where.
public struct CachePoint: Sendable {
    /// Originals (right after the fetch) or display-ready variants.
    public let layer: CacheLayer
    /// Whether entries go to the memory tier.
    public let memory: Bool
    /// Whether entries go to the disk tier.
    public let disk: Bool
    /// The disk cache directory, when `disk`.
    public let directory: String?
    /// Seconds an entry stays fresh when the origin says nothing.
    public let ttl: Double
    /// Whether the last good entry stands in when the work behind the stage fails.
    public let onError: CachePolicy.OnError

    /// `profileFile` anchors a relative `dir`.
    init(_ policy: CachePolicy, layer: CacheLayer, settings: CacheSettings, profileFile: String) {
        self.layer = layer
        memory = policy.memory ?? (layer == .variant)
        disk = policy.disk ?? (layer == .original)
        ttl = policy.ttl
        onError = policy.onError
        guard disk else {
            directory = nil
            return
        }
        if let explicit = settings.directory {
            directory = explicit
        } else if let dir = policy.directory {
            directory = Self.resolve(dir, relativeTo: profileFile)
        } else {
            directory = DiskCache.defaultDirectory
        }
    }

    /// "~/x" is under $HOME; a relative path is relative to the profile file's directory.
    static func resolve(_ path: String, relativeTo file: String) -> String {
        if path.hasPrefix("/") { return path }
        if path == "~" || path.hasPrefix("~/"), let home = getenv("HOME") {
            return String(cString: home) + path.dropFirst()
        }
        guard let slash = file.lastIndex(of: "/") else { return path }
        return String(file[...slash]) + path
    }
}
