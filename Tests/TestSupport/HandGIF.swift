/// A GIF written block by block, for tests that need what an encoder would not choose: a frame
/// with or without a transparent index, a disposal method, a frame smaller than the screen, a
/// table of its own. Colour tables have four entries; the image data is real LZW (a clear code
/// every two pixels keeps every code three bits wide), so libvips decodes it.
public struct HandGIF: Sendable {
    public struct Frame: Sendable {
        public var left = 0, top = 0, width: Int, height: Int
        /// The palette entry drawn as transparent, if any.
        public var transparent: Int?
        /// 1: left in place; 2: cleared to the background; 3: restored to what was before.
        public var disposal = 1
        /// Four RGB entries of the frame's own, or the global table.
        public var palette: [[UInt8]]?
        /// The palette index of pixel (x, y) of the frame.
        public var index: @Sendable (Int, Int) -> UInt8

        public init(
            left: Int = 0, top: Int = 0, width: Int, height: Int, transparent: Int? = nil, disposal: Int = 1,
            palette: [[UInt8]]? = nil, index: @escaping @Sendable (Int, Int) -> UInt8
        ) {
            (self.left, self.top, self.width, self.height) = (left, top, width, height)
            (self.transparent, self.disposal, self.palette, self.index) = (transparent, disposal, palette, index)
        }
    }

    public var width: Int, height: Int
    public var palette: [[UInt8]]
    public var frames: [Frame]

    public init(width: Int, height: Int, palette: [[UInt8]], frames: [Frame]) {
        (self.width, self.height, self.palette, self.frames) = (width, height, palette, frames)
    }

    public var bytes: [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        var out = Array("GIF89a".utf8) + u16(width) + u16(height) + [0x81, 0, 0] + palette.flatMap { $0 }
        out += [0x21, 0xFF, 0x0B] + Array("NETSCAPE2.0".utf8) + [0x03, 0x01, 0x00, 0x00, 0x00]
        for frame in frames {
            let flags = UInt8(frame.disposal << 2) | (frame.transparent == nil ? 0 : 1)
            out += [0x21, 0xF9, 0x04, flags, 0x04, 0x00, UInt8(frame.transparent ?? 0), 0x00]  // 40 ms
            out += [0x2C] + u16(frame.left) + u16(frame.top) + u16(frame.width) + u16(frame.height)
            if let own = frame.palette {
                out += [0x81] + own.flatMap { $0 }
            } else {
                out += [0x00]
            }
            out += [0x02] + Self.subBlocks(Self.lzw(frame))
        }
        return out + [0x3B]
    }

    /// The frame's indices as LZW codes of three bits (minimum code size 2: clear is 4, end 5).
    private static func lzw(_ frame: Frame) -> [UInt8] {
        var codes: [Int] = []
        var sinceClear = 2
        for y in 0..<frame.height {
            for x in 0..<frame.width {
                if sinceClear == 2 {
                    codes.append(4)
                    sinceClear = 0
                }
                codes.append(Int(frame.index(x, y) & 3))
                sinceClear += 1
            }
        }
        codes.append(5)
        // Appended in place: a copy per code made this quadratic, seconds a frame in a debug build.
        var (bytes, bits, filled) = ([UInt8](), 0, 0)
        bytes.reserveCapacity(codes.count * 3 / 8 + 1)
        for code in codes {
            bits |= code << filled
            filled += 3
            while filled >= 8 {
                bytes.append(UInt8(bits & 0xFF))
                (bits, filled) = (bits >> 8, filled - 8)
            }
        }
        if filled > 0 { bytes.append(UInt8(bits)) }
        return bytes
    }

    private static func subBlocks(_ data: [UInt8]) -> [UInt8] {
        stride(from: 0, to: data.count, by: 255).flatMap { start -> [UInt8] in
            let end = min(start + 255, data.count)
            return [UInt8(end - start)] + data[start..<end]
        } + [0]
    }
}

extension HandGIF {
    /// For each frame of the GIF `bytes`, whether it has a colour table of its own (or draws
    /// with the global one), read from its blocks; nil where they do not parse.
    public static func ownTables(in bytes: [UInt8]) -> [Bool]? {
        guard bytes.count > 13, bytes.starts(with: Array("GIF8".utf8)) else { return nil }
        func tableSize(_ flags: UInt8) -> Int { flags & 0x80 == 0 ? 0 : 3 << (Int(flags & 7) + 1) }
        /// The offset past the sub-blocks that start at `at`.
        func pastSubBlocks(_ at: Int) -> Int? {
            var at = at
            while at < bytes.count, bytes[at] != 0 { at += Int(bytes[at]) + 1 }
            return at < bytes.count ? at + 1 : nil
        }
        var at = 13 + tableSize(bytes[10])
        var own: [Bool] = []
        while at < bytes.count {
            switch bytes[at] {
            case 0x21:  // an extension: its label, then sub-blocks
                guard let next = pastSubBlocks(at + 2) else { return nil }
                at = next
            case 0x2C:  // an image: its descriptor, its table if any, the LZW code size, sub-blocks
                guard at + 10 < bytes.count else { return nil }
                own.append(bytes[at + 9] & 0x80 != 0)
                guard let next = pastSubBlocks(at + 10 + tableSize(bytes[at + 9]) + 1) else { return nil }
                at = next
            case 0x3B:
                return own
            default:
                return nil
            }
        }
        return nil
    }
}
