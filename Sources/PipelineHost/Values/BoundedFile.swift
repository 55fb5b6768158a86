#if canImport(Glibc)
    import Glibc
#endif

/// A file a profile names (a fallback image, an overlay, the profile itself), read whole only
/// when it is a regular file no larger than a bound: its size is checked before the first
/// byte is read, so a 3 GB (or sparse, or growing) file costs nothing, and a FIFO or a device
/// (/dev/zero) is refused rather than read for ever.
public enum BoundedFile {
    /// Why a file was not read: a sentence to follow the file's name.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        /// The reason, such as "is larger than 20.0 MB".
        public let description: String
    }

    /// The bytes of the file at `path`, at most `maxBytes` of them; at least one unless
    /// `allowEmpty`.
    public static func read(_ path: String, maxBytes: Int, allowEmpty: Bool = true) throws(Refusal) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            throw Refusal(
                description: errno == ENOENT ? "does not exist" : "cannot be read (\(String(cString: strerror(errno))))"
            )
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw Refusal(description: "cannot be read") }
        guard status.st_mode & S_IFMT == S_IFREG else { throw Refusal(description: "is not a regular file") }
        guard status.st_size <= maxBytes else {
            throw Refusal(description: "is larger than \(ByteText.bytes(maxBytes))")
        }
        // Read to the end, one byte past the bound at most: a file that grew meanwhile is caught
        // too. The buffer starts at the file's size and a byte (not at the bound, which is
        // megabytes of zeros for a profile of a few hundred bytes), and doubles if the file grew.
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size) + 1)
        var count = 0
        while count <= maxBytes {
            if count == bytes.count {
                bytes += [UInt8](repeating: 0, count: min(bytes.count, maxBytes + 1 - bytes.count))
            }
            let room = bytes.count - count
            let got = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, room) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw Refusal(description: "cannot be read (\(String(cString: strerror(errno))))") }
            if got == 0 { break }
            count += got
        }
        guard count <= maxBytes else { throw Refusal(description: "is larger than \(ByteText.bytes(maxBytes))") }
        guard count > 0 || allowEmpty else { throw Refusal(description: "is empty") }
        return Array(bytes.prefix(count))
    }
}
