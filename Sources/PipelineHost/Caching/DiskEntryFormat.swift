#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Crypto

/// The bytes of one disk cache file, self-contained so no shared index can be corrupted:
///
///     "PHCACHE1"  UInt32 LE metadata length  SHA-256(metadata + body)  metadata JSON  body
///
/// The checksum covers everything after it, so a torn, truncated or bit-flipped file never
/// reads back as an entry.
enum DiskEntryFormat {
    static let magic = Array("PHCACHE1".utf8)
    static let headerLength = magic.count + 4 + SHA256.byteCount

    /// What is stored about an entry besides its bytes. The key is redacted: no credential is
    /// ever written to disk.
    struct Metadata: Codable {
        var key: String
        /// The file's own name (a hash of the full key), so a misplaced file is not served.
        var name: String
        var layer: CacheLayer
        var byteCount: Int
        var storedAt: Double
        var expiresAt: Double
        var format: String?
        var contentType: String?
        var width: Int?
        var height: Int?
        var sourceWidth: Int?
        var sourceHeight: Int?
        var hints: CacheHints?
    }

    /// Everything before the body; the writer appends `entry.image.bytes` itself, without a copy.
    static func header(_ entry: CacheEntry, key: String, name: String, layer: CacheLayer) throws -> [UInt8] {
        let image = entry.image
        let metadata = Metadata(
            key: redactedKey(key), name: name, layer: layer, byteCount: image.bytes.count,
            storedAt: entry.storedAt, expiresAt: entry.expiresAt, format: image.format,
            contentType: image.declaredContentType, width: image.size?.width, height: image.size?.height,
            sourceWidth: image.sourceSize?.width, sourceHeight: image.sourceSize?.height, hints: image.cacheHints)
        let json = Array(try JSONEncoder().encode(metadata))
        var hasher = SHA256()
        hasher.update(data: json)
        hasher.update(bufferPointer: image.bytes.buffer)
        var header = magic
        header.reserveCapacity(headerLength + json.count)
        withUnsafeBytes(of: UInt32(json.count).littleEndian) { header.append(contentsOf: $0) }
        header.append(contentsOf: hasher.finalize())
        header.append(contentsOf: json)
        return header
    }

    /// A step key as a cache file may show it: the source part with user information and every
    /// parameter value masked (whatever the profile's normalize kept in the key), then the stage
    /// identities as they are.
    static func redactedKey(_ key: String) -> String {
        guard let cut = key.firstRange(of: " | ") else { return Redactor.redact(key, allValues: true) }
        return Redactor.redact(String(key[..<cut.lowerBound]), allValues: true) + String(key[cut.lowerBound...])
    }

    /// The metadata length a header announces, or nil when `header` does not start an entry.
    static func metadataLength<Bytes: Collection<UInt8>>(_ header: Bytes) -> Int? {
        guard header.count >= headerLength, header.prefix(magic.count).elementsEqual(magic) else { return nil }
        return header.dropFirst(magic.count).prefix(4).reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    /// Parses a whole file, or nil when it is not a sound entry named `name`.
    static func decode(_ file: ImageBytes, name: String) -> (metadata: Metadata, entry: CacheEntry)? {
        let raw = file.buffer
        guard let metadataLength = metadataLength(raw) else { return nil }
        let stored = raw[(magic.count + 4)..<headerLength]
        guard metadataLength <= raw.count - headerLength else { return nil }
        let rest = UnsafeRawBufferPointer(rebasing: raw[headerLength...])
        guard SHA256.hash(data: rest).elementsEqual(stored) else { return nil }
        let json = UnsafeRawBufferPointer(rebasing: rest[..<metadataLength])
        guard let metadata = try? JSONDecoder().decode(Metadata.self, from: Data(json)),
              metadata.name == name, metadata.byteCount == rest.count - metadataLength else { return nil }
        let bodyStart = headerLength + metadataLength
        // The body stays in the file's buffer: `bytes` keeps `file` alive instead of copying.
        let body = ImageBytes(adopting: UnsafeMutableRawPointer(mutating: raw.baseAddress! + bodyStart),
                              count: metadata.byteCount) { _ in withExtendedLifetime(file) {} }
        let size = metadata.width.flatMap { w in metadata.height.map { PixelSize(width: w, height: $0) } }
        let sourceSize = metadata.sourceWidth.flatMap { w in metadata.sourceHeight.map { PixelSize(width: w, height: $0) } }
        let image = EncodedImage(bytes: body, format: metadata.format, declaredContentType: metadata.contentType,
                                 size: size, sourceSize: sourceSize, cacheHints: metadata.hints)
        return (metadata, CacheEntry(image: image, storedAt: metadata.storedAt, expiresAt: metadata.expiresAt))
    }
}
