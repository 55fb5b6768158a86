import Glibc
import PipelineHost

/// Writes through a temporary file in the same directory and renames it into place, so a
/// reader (or a crash) never sees a half-written output.
enum AtomicFile {
    struct WriteError: Error, CustomStringConvertible {
        let description: String
    }

    /// Temporary files being written right now, so a forced exit can remove them.
    private static let pending = Locked(Set<String>())

    static func removePendingTemporaries() {
        pending.withLock { paths in
            for path in paths { unlink(path) }
            paths.removeAll()
        }
    }

    /// Replaces `path` only when it is missing or a regular file: `-o /dev/full` or a
    /// directory is refused, never renamed over (as root, rename would replace the device node).
    static func write(_ bytes: ImageBytes, to path: String) throws {
        var info = stat()
        if lstat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG {
            throw WriteError(description: "it exists and is not a regular file")
        }
        let temporary = path + ".\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        pending.withLock { _ = $0.insert(temporary) }
        defer { pending.withLock { _ = $0.remove(temporary) } }
        do {
            try AtomicWrite.write([bytes.buffer], via: .init(temporary), to: .init(path), sync: false)
        } catch {
            throw WriteError(description: error.reason)
        }
    }
}
