import Glibc
import PipelineHost
import Synchronization

/// Writes through a temporary file in the same directory and renames it into place, so a
/// reader (or a crash) never sees a half-written output.
enum AtomicFile {
    struct WriteError: Error, CustomStringConvertible {
        let description: String
    }

    /// Temporary files being written right now, so a forced exit can remove them.
    private static let pending = Mutex(Set<String>())

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
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw WriteError(description: String(cString: strerror(errno))) }
        var written = 0
        var failure: Int32 = 0
        while written < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + written, bytes.count - written)
            if n < 0 {
                if errno == EINTR { continue }
                failure = errno
                break
            }
            written += n
        }
        close(fd)
        if failure == 0, rename(temporary, path) == 0 { return }
        let reason = String(cString: strerror(failure != 0 ? failure : errno))
        unlink(temporary)
        throw WriteError(description: reason)
    }
}
