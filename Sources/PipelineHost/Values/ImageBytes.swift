/// Encoded image bytes in one immutable buffer that C code can read without a copy.
///
/// The buffer is adopted from whoever allocated it (curl's malloc, libvips' g_malloc) together
/// with the matching deallocator, so bytes move between Swift and C without copying. It is never
/// mutated after init, which is what makes sharing it across tasks safe.
public final class ImageBytes: @unchecked Sendable {
    /// The first byte; nil when empty.
    public let baseAddress: UnsafeRawPointer?
    /// How many bytes there are.
    public let count: Int
    private let release: @Sendable (UnsafeMutableRawPointer) -> Void

    /// Adopts `pointer`; `release` is called once when the last reference goes away.
    public init(
        adopting pointer: UnsafeMutableRawPointer?, count: Int,
        release: @escaping @Sendable (UnsafeMutableRawPointer) -> Void
    ) {
        self.baseAddress = UnsafeRawPointer(pointer)
        self.count = pointer == nil ? 0 : count
        self.release = release
    }

    /// Copies Swift bytes into a buffer of its own.
    public convenience init<Bytes: Collection>(copying bytes: Bytes) where Bytes.Element == UInt8 {
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        pointer.copyMemory(from: Array(bytes), byteCount: bytes.count)
        self.init(adopting: pointer, count: bytes.count) { $0.deallocate() }
    }

    deinit {
        if let baseAddress { release(UnsafeMutableRawPointer(mutating: baseAddress)) }
    }

    /// The bytes as a buffer, valid while this object lives.
    public var buffer: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: baseAddress, count: count) }

    /// The first `n` bytes, for sniffing.
    public func prefix(_ n: Int) -> [UInt8] { Array(buffer.prefix(n)) }

    /// A copy of the bytes.
    public var array: [UInt8] { Array(buffer) }
}
