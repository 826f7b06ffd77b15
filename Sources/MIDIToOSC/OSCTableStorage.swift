import OSCMapping
import Storage

/// What the compiled formats of the formatters (``OSCEventFormatter``, ``OSCMappingTables``)
/// are made of: runs into byte stores, arrays frozen into fixed buffers, and decimals written
/// into a message without building a string.

/// A run of bytes in one of the tables' byte stores.
package struct OSCByteRange: BitwiseCopyable {
    var offset: Int
    var count: Int
}

extension FixedBuffer {
    /// A buffer of exactly `array`'s elements.
    static func frozen(_ array: [Element]) -> FixedBuffer<Element> {
        FixedBuffer(count: array.count) { array[$0] }
    }
}

extension FixedBytes {
    /// A copy of `bytes`, 16-byte aligned.
    static func frozen(_ bytes: [UInt8]) -> FixedBytes { FixedBytes(copying: bytes) }
}

/// Digits in `value` written by ``writeDecimal(_:to:at:)``, a minus sign included.
@inline(__always)
package func decimalLength(_ value: Int64) -> Int {
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
package func writeDecimal(_ value: Int64, to start: UnsafeMutableRawPointer, at offset: inout Int) {
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
