import Crypto
import Logging

/// Sources to drop from every tier: every original and variant of their source keys, for every
/// profile and option. A source is named by the SHA-256 of its source key, which every tier
/// records with an entry (disk metadata, the Redis index, the object store's folder), so a node
/// that hears of a purge from another one finds the entries without knowing the source.
public struct SourcePurge: Sendable, Hashable {
    /// `digest(_:)` of each source key.
    public let digests: Set<String>
    /// The source keys themselves, when this node computed them (not when the purge came from
    /// another node): they also match disk entries written before entries named their source.
    public let keys: Set<String>

    /// A purge of these source keys.
    public init(sourceKeys: some Sequence<String>) {
        keys = Set(sourceKeys)
        digests = Set(keys.map(Self.digest))
    }

    /// A purge heard from another node: digests only.
    public init(digests: Set<String>) {
        self.digests = digests
        keys = []
    }

    /// The SHA-256 of a source key, in hex.
    public static func digest(_ sourceKey: String) -> String { SHA256.hash(data: Array(sourceKey.utf8)).hexDigits }

    /// Whether an entry under `key` belongs to a purged source.
    public func matches(_ key: StageKey) -> Bool {
        keys.contains(key.source) || digests.contains(Self.digest(key.source))
    }

    /// Whether a disk entry belongs to a purged source.
    func matches(_ metadata: DiskEntryFormat.Metadata) -> Bool {
        if let source = metadata.source { return digests.contains(source) }
        let head = metadata.key.firstRange(of: " | ").map { String(metadata.key[..<$0.lowerBound]) } ?? metadata.key
        return keys.contains { DiskEntryFormat.redactedKey($0) == head }
    }
}

/// A tier that can drop a source's entries itself (Redis, the object store), beside memory and
/// disk, which the pipeline purges.
public protocol PurgeableTier: CacheTier {
    /// Deletes every entry of the purged sources; returns how many.
    func purge(_ purge: SourcePurge) async throws(PipelineError) -> Int

    /// Tells the other nodes, which then drop their own copies; called once every tier of this
    /// node is purged (never for a purge heard from another node).
    func announce(_ purge: SourcePurge) async throws(PipelineError)

    /// Called with each purge another node announces; the pipeline installs it.
    func onAnnouncedPurge(_ handler: @escaping @Sendable (SourcePurge) async -> Void)
}

extension PurgeableTier {
    /// Tells no one: a tier that no other node hears through.
    public func announce(_ purge: SourcePurge) async throws(PipelineError) {}

    /// Hears nothing: a tier that no other node announces through.
    public func onAnnouncedPurge(_ handler: @escaping @Sendable (SourcePurge) async -> Void) {}
}

/// What a purge removed, by tier name ("memory", "disk", "shared", "store"), and what failed.
public struct PurgeReport: Sendable, Equatable {
    /// Entries removed, by tier name.
    public var removed: [String: Int] = [:]
    /// "store: S3 AccessDenied (HTTP 403) ...": a tier that could not be purged.
    public var failures: [String] = []

    /// Nothing removed yet.
    public init() {}

    /// Logs a purge another node announced and this one carried out; a failure says so.
    func logAnnounced(_ purge: SourcePurge, to logger: Logger) {
        let metadata: Logger.Metadata = [
            "removed": "\(removed.values.reduce(0, +))", "sources": "\(purge.digests.count)",
        ]
        if failures.isEmpty {
            logger.info("purged on another node's request", metadata: metadata)
        } else {
            logger.warning(
                "a purge another node asked for failed here: \(failures.joined(separator: "; "))", metadata: metadata)
        }
    }
}
