/// A cursor over packet bytes whose every read checks the bounds first, so that hostile input
/// produces an error instead of a trap.
struct OSCByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset: Int

    init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    // `offset` never exceeds `bytes.count`, so this subtraction cannot overflow.
    var remaining: Int { bytes.count - offset }

    mutating func readUInt32(orThrow error: OSCDecodeError) throws(OSCDecodeError) -> UInt32 {
        guard remaining >= 4 else { throw error }
        let value = bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
        offset += 4
        return UInt32(bigEndian: value)
    }

    mutating func readUInt64(orThrow error: OSCDecodeError) throws(OSCDecodeError) -> UInt64 {
        guard remaining >= 8 else { throw error }
        let value = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        offset += 8
        return UInt64(bigEndian: value)
    }

    mutating func readBytes(_ count: Int, orThrow error: OSCDecodeError) throws(OSCDecodeError)
        -> UnsafeRawBufferPointer
    {
        guard count >= 0, remaining >= count else { throw error }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
        offset += count
        return slice
    }

    /// Reads a NUL-terminated, zero-padded OSC string and returns it without the NUL.
    mutating func readString() throws(OSCDecodeError) -> UnsafeRawBufferPointer {
        var end = offset
        while end < bytes.count, bytes[end] != 0 { end += 1 }
        guard end < bytes.count else { throw .unterminatedString }
        let string = UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
        // The NUL at `end` is the first of the padding bytes.
        let paddedEnd = OSCWriter.padded(end + 1 - offset) + offset
        guard paddedEnd <= bytes.count else { throw .unterminatedString }
        try checkZero(from: end + 1, to: paddedEnd)
        offset = paddedEnd
        return string
    }

    /// Reads an Int32 size, then that many bytes and their zero padding.
    mutating func readBlob() throws(OSCDecodeError) -> UnsafeRawBufferPointer {
        let size = Int(Int32(bitPattern: try readUInt32(orThrow: .truncatedArgument)))
        guard size >= 0, OSCWriter.padded(size) <= remaining else { throw .blobLengthOutOfRange }
        let data = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + size])
        try checkZero(from: offset + size, to: offset + OSCWriter.padded(size))
        offset += OSCWriter.padded(size)
        return data
    }

    private func checkZero(from start: Int, to end: Int) throws(OSCDecodeError) {
        var i = start
        while i < end {
            guard bytes[i] == 0 else { throw .nonZeroPadding }
            i += 1
        }
    }
}
