import CoreMetrics

#if canImport(Glibc)
    import Glibc
#endif

/// How much a pipeline may run at once.
public struct PipelineConfiguration: Sendable {
    /// Transfers at once, over all hosts.
    public var transfers: Int
    /// Transfers at once to one host, so one slow server cannot take every slot, and a server
    /// is not hammered.
    public var transfersPerHost: Int
    /// CPU stages (decode, process, encode) at once. About the core count: each one runs on a
    /// thread of its own, and libvips' own thread pool is sized to match (see VipsPlugin).
    public var cpuStages: Int
    /// What the profiles' `cache` stages may do, and where the disk cache lives.
    public var cache: CacheSettings
    /// Bytes that transfers' bodies and decodes' predicted peaks may hold at once
    /// (`MemoryBudget`); nil: no budget. Default: `MemoryLimit.defaultBudget`, half of the
    /// memory cgroup's limit or of physical memory.
    public var memoryBudget: Int?
    /// How long work may wait for the memory budget before it fails `overloaded`; nil: as long
    /// as it takes (a batch), which a service caps below its request deadline.
    public var memoryWait: Duration?
    /// Where counters and timers go; nil means swift-metrics' bootstrapped backend
    /// (`MetricsSystem.factory`), which does nothing until an app bootstraps one.
    public var metrics: (any MetricsFactory)?

    /// Slots for transfers (in all and per host) and CPU stages, the cache settings, and where metrics go.
    public init(
        transfers: Int = PipelineConfiguration.defaultTransfers,
        transfersPerHost: Int = PipelineConfiguration.defaultTransfersPerHost,
        cpuStages: Int = PipelineConfiguration.cores,
        cache: CacheSettings = CacheSettings(), metrics: (any MetricsFactory)? = nil,
        memoryBudget: Int? = MemoryLimit.defaultBudget, memoryWait: Duration? = nil
    ) {
        self.transfers = max(1, transfers)
        self.transfersPerHost = max(1, transfersPerHost)
        self.cpuStages = max(1, cpuStages)
        self.cache = cache
        self.metrics = metrics
        self.memoryBudget = memoryBudget.map { max(1, $0) }
        self.memoryWait = memoryWait
    }

    /// Transfers at once when nothing says otherwise (a batch's, `run --connections`).
    public static let defaultTransfers = 8
    /// Transfers at once to one host when nothing says otherwise (`run --per-host`).
    public static let defaultTransfersPerHost = 4

    /// The cores this process may use: its CPU quota and cpuset, else the cores online (`CPULimit`).
    public static var cores: Int { CPULimit.detected.cores }
}
