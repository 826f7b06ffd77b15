/// What the compiled tables of both formatters (``OSCFormatterTables``, ``OSCMappingTables``)
/// are made of: runs into byte stores, arrays frozen into buffers the hot path reaches through
/// raw pointers, and decimals written into a message without building a string.

/// A run of bytes in one of the tables' byte stores.
struct OSCByteRange: BitwiseCopyable {
    var offset: Int
    var count: Int
}

extension UnsafeMutableBufferPointer {
    /// A buffer of exactly `array`'s elements, owned by the caller. An empty array still
    /// allocates one element, so that every table has a base address.
    static func frozen(_ array: [Element]) -> UnsafeMutableBufferPointer<Element> {
        let buffer = UnsafeMutableBufferPointer<Element>.allocate(capacity: Swift.max(array.count, 1))
        _ = buffer.initialize(from: array)
        return UnsafeMutableBufferPointer(rebasing: buffer[..<array.count])
    }
}

extension UnsafeMutableRawBufferPointer {
    /// A buffer holding `bytes`, owned by the caller (at least one byte, for a base address).
    static func frozen(_ bytes: [UInt8]) -> UnsafeMutableRawBufferPointer {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(bytes.count, 1), alignment: 16)
        buffer.copyBytes(from: bytes)
        return buffer
    }
}

/// Digits in `value` written by ``writeDecimal(_:to:at:)``, a minus sign included.
@inline(__always)
func decimalLength(_ value: Int64) -> Int {
    var length = value < 0 ? 2 : 1
    var rest = value.magnitude
    while rest >= 10 {
        rest /= 10
        length &+= 1
    }
    return length
}

/// Writes `value` in decimal at `start + offset` and advances `offset` past it.
@inline(__always)
func writeDecimal(_ value: Int64, to start: UnsafeMutableRawPointer, at offset: inout Int) {
    if value < 0 {
        start.storeBytes(of: UInt8(ascii: "-"), toByteOffset: offset, as: UInt8.self)
        offset &+= 1
    }
    var divisor: UInt64 = 1
    let magnitude = value.magnitude
    while divisor <= magnitude / 10 { divisor &*= 10 }
    var rest = magnitude
    while divisor > 0 {
        start.storeBytes(
            of: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest / divisor), toByteOffset: offset, as: UInt8.self)
        rest %= divisor
        divisor /= 10
        offset &+= 1
    }
}
