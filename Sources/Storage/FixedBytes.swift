/// Raw bytes in memory of their own, aligned, freed with the owner: a packet buffer or a byte
/// store written and read in place.
public struct FixedBytes: ~Copyable {
    /// The bytes, valid while this lives.
    public let bytes: UnsafeMutableRawBufferPointer

    /// `count` bytes, uninitialised, starting at a multiple of `alignment` (`count` 0 still
    /// allocates one, so that there is always a base address).
    @inlinable
    public init(count: Int, alignment: Int = 16) {
        let start = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: alignment)
        bytes = UnsafeMutableRawBufferPointer(start: start, count: max(count, 0))
    }

    /// A copy of `contents`.
    @inlinable
    public init(copying contents: [UInt8], alignment: Int = 16) {
        self.init(count: contents.count, alignment: alignment)
        bytes.copyBytes(from: contents)
    }

    /// The first byte's address, valid while this lives.
    @inlinable
    public var baseAddress: UnsafeMutableRawPointer { bytes.baseAddress.unsafelyUnwrapped }

    /// How many bytes there are.
    @inlinable
    public var count: Int { bytes.count }

    deinit { bytes.baseAddress.unsafelyUnwrapped.deallocate() }
}
