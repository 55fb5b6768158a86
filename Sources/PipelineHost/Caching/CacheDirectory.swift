import Glibc

/// One directory inside the disk cache, opened without following a symlink, and the files in
/// it reached relative to that descriptor (openat, fstatat, unlinkat, renameat). A symlink put
/// inside the cache (a shard pointing at /etc, say) is never followed: opening it as a
/// directory or a file fails, and maintenance never removes what is behind it. The cache's own
/// root may be a symlink; that is the user's choice of where it lives.
final class CacheDirectory {
    let fd: Int32
    let path: String

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    /// The cache root, following a symlink to it; nil when it does not exist.
    static func root(_ path: String) -> CacheDirectory? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        return fd >= 0 ? CacheDirectory(fd: fd, path: path) : nil
    }

    /// A real directory called `name` in this one; nil when missing, or when it is a symlink
    /// or anything but a directory.
    func subdirectory(_ name: String) -> CacheDirectory? {
        let fd = openat(self.fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        return fd >= 0 ? CacheDirectory(fd: fd, path: path + "/" + name) : nil
    }

    /// The same, created when missing.
    func makeSubdirectory(_ name: String) throws(DiskCache.WriteError) -> CacheDirectory {
        if let existing = subdirectory(name) { return existing }
        guard mkdirat(fd, name, 0o755) == 0 || errno == EEXIST, let made = subdirectory(name) else {
            throw DiskCache.failure("create directory \(path)/\(name)")
        }
        return made
    }

    /// Every name in the directory but . and ..
    func names() -> [String] {
        let copy = dup(fd)
        guard copy >= 0, let stream = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            return []
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The status of `name` when it is a regular file (not a symlink), else nil.
    func regularFile(_ name: String) -> stat? {
        var info = stat()
        guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return info
    }

    /// Opens a file in this directory; a symlink is refused (ELOOP).
    func openFile(_ name: String, _ flags: Int32, mode: mode_t = 0) -> Int32 {
        openat(fd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)
    }

    /// Removes `name` when it is a regular file.
    @discardableResult
    func removeFile(_ name: String) -> Bool {
        regularFile(name) != nil && unlinkat(fd, name, 0) == 0
    }
}
