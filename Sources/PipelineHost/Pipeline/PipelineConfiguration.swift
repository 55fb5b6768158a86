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

    public init(transfers: Int = 8, transfersPerHost: Int = 4, cpuStages: Int = PipelineConfiguration.cores,
                cache: CacheSettings = CacheSettings()) {
        self.transfers = max(1, transfers)
        self.transfersPerHost = max(1, transfersPerHost)
        self.cpuStages = max(1, cpuStages)
        self.cache = cache
    }

    /// The cores this process may use.
    public static var cores: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}
