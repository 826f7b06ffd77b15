/// A cursor over packet bytes whose every read checks the bounds first, so that hostile input
/// produces an error instead of a trap.
package struct OSCByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset: Int

    package init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
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
        if offset & 3 == 0 && bytes.count & 3 == 0, let base = bytes.baseAddress {
            return try readAlignedString(base)
        }
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

    /// ``readString()`` a word at a time: on a word boundary of a whole number of words (every
    /// string in a well-formed packet), the string ends in the first word holding a zero byte,
    /// and its padding is the rest of that word. Same results and errors as the byte loop.
    private mutating func readAlignedString(_ base: UnsafeRawPointer) throws(OSCDecodeError)
        -> UnsafeRawBufferPointer
    {
        var word = offset
        while word < bytes.count {
            // Byte k of the string is bits 8k..8k+7 of `value`, whatever the machine's order.
            let value = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: word, as: UInt32.self))
            // The lowest set bit marks the first zero byte (higher ones may be false alarms).
            let zeros = (value &- 0x0101_0101) & ~value & 0x8080_8080
            if zeros != 0 {
                let nul = zeros.trailingZeroBitCount >> 3
                // The padding is the rest of this word: everything above the NUL must be zero.
                guard nul == 3 || value >> (UInt32(nul + 1) << 3) == 0 else { throw .nonZeroPadding }
                let string = UnsafeRawBufferPointer(start: base + offset, count: word + nul - offset)
                offset = word + 4
                return string
            }
            word += 4
        }
        throw .unterminatedString
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
