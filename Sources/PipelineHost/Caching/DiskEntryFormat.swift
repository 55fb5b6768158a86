import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The bytes of one disk cache file, self-contained so no shared index can be corrupted:
///
///     "PHCACHE2"  UInt32 LE metadata length  SHA-256(metadata + body)
///     freshness: storedAt, expiresAt (Float64 LE), check (UInt64 LE)  metadata JSON  body
///
/// The checksum covers the metadata and body, so a torn, truncated or bit-flipped file never
/// reads back as an entry. The freshness block sits outside it, at a fixed offset, so a
/// revalidation rewrites 24 bytes instead of the entry; it has a check of its own, and a torn
/// block falls back to the freshness in the metadata. "PHCACHE1" files (no freshness block)
/// still read.
package enum DiskEntryFormat {
    static let magic = Array("PHCACHE2".utf8)
    static let previousMagic = Array("PHCACHE1".utf8)
    /// Where the freshness block starts, and its length.
    static let freshnessOffset = magic.count + 4 + SHA256.byteCount
    static let freshnessLength = 24
    static let headerLength = freshnessOffset + freshnessLength

    /// What is stored about an entry besides its bytes. The key is redacted: no credential is
    /// ever written to disk.
    package struct Metadata: Codable {
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
        /// For a variant: the version (validators) of the original it was made from.
        var origin: String?
        /// SHA-256 of the source key (`SourcePurge.digest`), so a purge finds every entry of a
        /// source, on any node, without knowing the source itself. Nil in older entries.
        var source: String?
    }

    /// Everything before the body; the writer appends `entry.image.bytes` itself, without a copy.
    package static func header(
        _ entry: CacheEntry, key: String, name: String, layer: CacheLayer, source: String? = nil
    ) throws -> [UInt8] {
        let image = entry.image
        let metadata = Metadata(
            key: redactedKey(key), name: name, layer: layer, byteCount: image.bytes.count,
            storedAt: entry.storedAt, expiresAt: entry.expiresAt, format: image.format,
            contentType: image.declaredContentType, width: image.size?.width, height: image.size?.height,
            sourceWidth: image.sourceSize?.width, sourceHeight: image.sourceSize?.height, hints: image.cacheHints,
            origin: entry.origin, source: source.map(SourcePurge.digest))
        let json = Array(try JSONEncoder().encode(metadata))
        var hasher = SHA256()
        hasher.update(data: json)
        hasher.update(bufferPointer: image.bytes.buffer)
        var header = magic
        header.reserveCapacity(headerLength + json.count)
        withUnsafeBytes(of: UInt32(json.count).littleEndian) { header.append(contentsOf: $0) }
        header.append(contentsOf: hasher.finalize())
        header.append(contentsOf: freshness(storedAt: entry.storedAt, expiresAt: entry.expiresAt))
        header.append(contentsOf: json)
        return header
    }

    /// The freshness block: both times and a check over them.
    static func freshness(storedAt: Double, expiresAt: Double) -> [UInt8] {
        var block: [UInt8] = []
        block.reserveCapacity(freshnessLength)
        for value in [storedAt.bitPattern, expiresAt.bitPattern, check(storedAt.bitPattern, expiresAt.bitPattern)] {
            withUnsafeBytes(of: value.littleEndian) { block.append(contentsOf: $0) }
        }
        return block
    }

    /// The times in a freshness block, or nil when its check fails (a torn update).
    static func readFreshness<Bytes: Collection<UInt8>>(_ block: Bytes) -> (storedAt: Double, expiresAt: Double)? {
        guard block.count >= freshnessLength else { return nil }
        let words = (0..<3).map { index in
            block.dropFirst(index * 8).prefix(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
        guard words[2] == check(words[0], words[1]) else { return nil }
        return (Double(bitPattern: words[0]), Double(bitPattern: words[1]))
    }

    /// FNV-1a over the 16 bytes: enough to tell a torn write from a whole one.
    private static func check(_ first: UInt64, _ second: UInt64) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for word in [first, second] {
            for shift in stride(from: 0, to: 64, by: 8) {
                hash = (hash ^ (word >> UInt64(shift) & 0xFF)) &* 0x100_0000_01b3
            }
        }
        return hash
    }

    /// A step key as a cache file may show it: the source part with user information and every
    /// parameter value masked (whatever the profile's normalize kept in the key), then the stage
    /// identities as they are.
    static func redactedKey(_ key: String) -> String {
        guard let cut = key.firstRange(of: " | ") else { return Redactor.redact(key, allValues: true) }
        return Redactor.redact(String(key[..<cut.lowerBound]), allValues: true) + String(key[cut.lowerBound...])
    }

    /// Where a file's parts start: what its first `headerLength` bytes say.
    struct Layout {
        /// The metadata's length, as announced.
        let metadataLength: Int
        /// Where the metadata starts: after the freshness block, or right after the checksum
        /// in a "PHCACHE1" file.
        let metadataOffset: Int
        /// Whether there is a freshness block.
        var hasFreshness: Bool { metadataOffset == headerLength }
    }

    /// The layout a header announces, or nil when `header` does not start an entry.
    static func layout<Bytes: Collection<UInt8>>(_ header: Bytes) -> Layout? {
        guard header.count >= freshnessOffset else { return nil }
        let offset: Int
        if header.prefix(magic.count).elementsEqual(magic), header.count >= headerLength {
            offset = headerLength
        } else if header.prefix(magic.count).elementsEqual(previousMagic) {
            offset = freshnessOffset
        } else {
            return nil
        }
        return Layout(
            metadataLength: header.dropFirst(magic.count).prefix(4).reversed().reduce(0) { $0 << 8 | Int($1) },
            metadataOffset: offset)
    }

    /// Parses a whole file, or nil when it is not a sound entry named `name`.
    package static func decode(_ file: ImageBytes, name: String) -> (metadata: Metadata, entry: CacheEntry)? {
        let raw = file.buffer
        guard let layout = layout(raw) else { return nil }
        let metadataLength = layout.metadataLength, headerLength = layout.metadataOffset
        let stored = raw[(magic.count + 4)..<freshnessOffset]
        guard metadataLength <= raw.count - headerLength else { return nil }
        let rest = UnsafeRawBufferPointer(rebasing: raw[headerLength...])
        guard SHA256.hash(data: rest).elementsEqual(stored) else { return nil }
        let json = UnsafeRawBufferPointer(rebasing: rest[..<metadataLength])
        guard let metadata = try? JSONDecoder().decode(Metadata.self, from: Data(json)),
            metadata.name == name, metadata.byteCount == rest.count - metadataLength
        else { return nil }
        let bodyStart = headerLength + metadataLength
        // The body stays in the file's buffer: `bytes` keeps `file` alive instead of copying.
        let body = ImageBytes(
            adopting: UnsafeMutableRawPointer(mutating: raw.baseAddress! + bodyStart),
            count: metadata.byteCount
        ) { _ in withExtendedLifetime(file) {} }
        let size = metadata.width.flatMap { w in metadata.height.map { PixelSize(width: w, height: $0) } }
        let sourceSize = metadata.sourceWidth.flatMap { w in
            metadata.sourceHeight.map { PixelSize(width: w, height: $0) }
        }
        let image = EncodedImage(
            bytes: body, format: metadata.format, declaredContentType: metadata.contentType,
            size: size, sourceSize: sourceSize, cacheHints: metadata.hints)
        let freshness =
            layout.hasFreshness ? readFreshness(raw[freshnessOffset..<(freshnessOffset + freshnessLength)]) : nil
        return (
            metadata,
            CacheEntry(
                image: image, storedAt: freshness?.storedAt ?? metadata.storedAt,
                expiresAt: freshness?.expiresAt ?? metadata.expiresAt, origin: metadata.origin)
        )
    }
}
