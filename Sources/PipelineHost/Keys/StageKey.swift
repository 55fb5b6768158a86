/// The key of a stage prefix: the stable source key plus the identity of each stage so far.
/// Two requests with equal keys at some stage would produce equal values there.
public struct StageKey: Sendable, Hashable, CustomStringConvertible {
    public private(set) var source: String
    /// Which version of a local file the source is (`FileVersion`): part of the key, not of
    /// `source`, so a purge of the source reaches every version.
    public private(set) var sourceVersion: String?
    public private(set) var stages: [StageIdentity] = []

    /// The key of a request's source, before any stage.
    public init(source: String) { self.source = source }

    /// The key of a local file's source at one version of the file, before any stage.
    public init(source: String, version: String?) {
        self.source = source
        sourceVersion = version
    }

    /// Adds the identity of the next step.
    public mutating func append(_ identity: StageIdentity) { stages.append(identity) }

    public var description: String {
        ([source] + (sourceVersion.map { [$0] } ?? []) + stages.map(\.description)).joined(separator: " | ")
    }

    /// About what the key takes in memory: its text and a little per stage. Caches that hold
    /// keys count it, so a long URL costs what it weighs.
    public var byteCount: Int {
        stages.reduce(source.utf8.count + (sourceVersion?.utf8.count ?? 0) + 64) {
            $0 + $1.description.utf8.count + 32
        }
    }
}
