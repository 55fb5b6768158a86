import PipelineHost
import Synchronization

/// The regions found in recent sources, by the finder and the source's bytes: a second size of
/// the same photo, made after the first one finished, reads them instead of looking again
/// (requests at the same time share the step itself, in the pipeline). Keyed by the bytes, not
/// the URL, so a source whose picture changed is looked at afresh; bounded by count, and
/// started over when full, as the key memo is.
enum RegionMemo {
    struct Key: Hashable {
        let finder: String
        let length: Int
        let digest: Int
    }

    static let limit = 4096
    private static let entries = Mutex<[Key: [ImageRegion]]>([:])

    static func key(finder: String, bytes: ImageBytes) -> Key {
        var hasher = Hasher()
        hasher.combine(bytes: bytes.buffer)
        return Key(finder: finder, length: bytes.count, digest: hasher.finalize())
    }

    static subscript(key: Key) -> [ImageRegion]? { entries.withLock { $0[key] } }

    static func remember(_ regions: [ImageRegion], for key: Key) {
        entries.withLock {
            if $0.count >= limit { $0.removeAll(keepingCapacity: true) }
            $0[key] = regions
        }
    }
}
