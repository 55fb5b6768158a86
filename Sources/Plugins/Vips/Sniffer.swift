/// Tells what encoded bytes are from the bytes themselves, never from Content-Type: a server that
/// answers 200 with an HTML login page or a Subsonic XML error must not reach an image decoder.
enum Sniffer {
    enum Verdict: Equatable {
        case empty
        case image(format: String)
        /// Text of some kind: "text/html", "text/xml", "image/svg+xml", "application/json", "text/plain".
        case text(mediaType: String)
        case unknown
    }

    static func sniff(_ head: [UInt8]) -> Verdict {
        guard !head.isEmpty else { return .empty }
        if let format = imageFormat(head) { return .image(format: format) }
        return textType(head).map { .text(mediaType: $0) } ?? .unknown
    }

    private static func imageFormat(_ b: [UInt8]) -> String? {
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + magic.count && Array(b[offset..<offset + magic.count]) == magic
        }
        if starts([0xFF, 0xD8, 0xFF]) { return "jpeg" }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "png" }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return "gif" }
        if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) { return "webp" }
        if starts(Array("ftyp".utf8), at: 4), b.count >= 12 {
            let brand = String(decoding: b[8..<12], as: UTF8.self)
            return brand.hasPrefix("avi") ? "avif" : "heif"
        }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return "tiff" }
        if starts([0xFF, 0x0A]) || starts([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20]) { return "jxl" }
        // BMP: "BM", then a DIB header of a known size at offset 14.
        if starts(Array("BM".utf8)), b.count >= 18,
            [12, 40, 52, 56, 64, 108, 124].contains(Int(b[14]) | Int(b[15]) << 8)
        {
            return "bmp"
        }
        // ICO: reserved 0, type 1, and at least one image.
        if starts([0, 0, 1, 0]), b.count >= 6, b[4] != 0 || b[5] != 0 { return "ico" }
        return nil
    }

    private static func textType(_ bytes: [UInt8]) -> String? {
        var b = bytes[...]
        if b.starts(with: [0xEF, 0xBB, 0xBF]) { b = b.dropFirst(3) }
        b = b.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let text = String(decoding: b.prefix(1024), as: UTF8.self).lowercased()
        if text.hasPrefix("<") {
            if text.contains("<svg") { return "image/svg+xml" }
            if text.hasPrefix("<!doctype html") || text.hasPrefix("<html") || text.contains("<head")
                || text.contains("<body")
            {
                return "text/html"
            }
            return "text/xml"
        }
        if text.hasPrefix("{") || text.hasPrefix("[") { return "application/json" }
        // Text: no control bytes and valid UTF-8 (one replacement allowed for a character cut
        // at the end of the prefix).
        let head = b.prefix(512)
        let noControls = head.allSatisfy { $0 >= 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let invalid = String(decoding: head, as: UTF8.self).unicodeScalars.filter { $0 == "\u{FFFD}" }.count
        return noControls && invalid <= 1 && !head.isEmpty ? "text/plain" : nil
    }
}
