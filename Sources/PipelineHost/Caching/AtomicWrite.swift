import Glibc

/// Writes a file so that a reader, or a crash, sees the whole file or none: a new temporary
/// (created with O_EXCL, never through a symlink), every byte written, fsynced when asked, then
/// renamed over the final name. On failure the temporary is removed and an old file stays.
/// The disk cache and the CLI's output files both write this way.
package enum AtomicWrite {
    /// A file by directory descriptor and name: AT_FDCWD with a path, or a directory opened
    /// without following symlinks (`CacheDirectory`) with a plain name.
    package struct Place {
        package let directory: Int32
        package let name: String

        package init(directory: Int32 = AT_FDCWD, _ name: String) {
            self.directory = directory
            self.name = name
        }
    }

    /// Which step failed, and errno.
    package struct Failure: Error {
        /// "create", "write" or "rename".
        package let step: String
        package let code: Int32
        /// strerror's text for `code`.
        package var reason: String { String(cString: strerror(code)) }
    }

    package static func write(
        _ chunks: [UnsafeRawBufferPointer], via temporary: Place, to final: Place,
        sync: Bool
    ) throws(Failure) {
        let fd = openat(
            temporary.directory, temporary.name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Failure(step: "create", code: errno) }
        var failure: Failure?
        for chunk in chunks where failure == nil && !writeAll(fd, chunk) {
            failure = Failure(step: "write", code: errno)
        }
        if failure == nil, sync, fsync(fd) != 0 { failure = Failure(step: "write", code: errno) }
        close(fd)
        if failure == nil, renameat(temporary.directory, temporary.name, final.directory, final.name) != 0 {
            failure = Failure(step: "rename", code: errno)
        }
        guard let failure else { return }
        unlinkat(temporary.directory, temporary.name, 0)
        throw failure
    }

    /// Writes every byte of `buffer`, through EINTR and short writes.
    package static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }
}
