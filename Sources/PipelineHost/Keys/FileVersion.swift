#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Which version of a local file a source names: its modification time, size and inode. A
/// source key names a path, and the file there can change (an app's cover art rewritten, a
/// photo edited): every key of the request carries this too, so memory, disk and shared tiers
/// answer for the file as it is now, not with what was made of it before.
public enum FileVersion {
    /// The version of the file a plain path or `file:` URL names; nil for other sources, and
    /// for a file that cannot be read (the fetch then fails, and a failure is not kept).
    public static func of(_ location: String) -> String? {
        guard let path = path(of: location) else { return nil }
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "file \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(info.st_size) bytes inode \(info.st_ino)"
    }

    /// The filesystem path of a plain path or a `file:` URL (`file:///a%20b.jpg`, `file:/a.jpg`,
    /// `file://localhost/a.jpg`), percent-escapes decoded; nil for other locations.
    static func path(of location: String) -> String? {
        if SourceLocation(location).isPlainPath { return location.isEmpty ? nil : location }
        guard let url = URL(string: location), url.scheme?.lowercased() == "file" else { return nil }
        guard (url.host ?? "").isEmpty || url.host?.lowercased() == "localhost" else { return nil }
        let path = url.path(percentEncoded: false)
        return path.isEmpty ? nil : path
    }
}
