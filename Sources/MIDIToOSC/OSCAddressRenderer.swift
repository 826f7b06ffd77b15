import MIDI
import OSCMapping
import Storage

/// Renders addresses from compiled templates: literals, port names and kind names are runs of
/// one byte store, so rendering copies bytes and writes digits.
struct OSCAddressRenderer: ~Copyable {
    let segments: FixedBuffer<OSCCompiledSegment>
    /// Sanitised port names, kind names and template literals.
    let text: FixedBytes
    let portNames: FixedBuffer<OSCByteRange>
    let typeNames: FixedBuffer<OSCByteRange>
    /// The longest address any event can render to.
    package let capacity: Int

    /// Writes the address for `event` at `start`, which has room for `capacity` bytes.
    func render(_ range: OSCByteRange, _ event: MIDIEvent, into start: UnsafeMutableRawPointer) -> Int {
        var count = 0
        var i = range.offset
        while i < range.offset + range.count {
            switch segments[i] {
            case .literal(let literal): copy(literal, to: start, at: &count)
            case .placeholder(let placeholder):
                switch placeholder {
                case .port:
                    let port = Int(event.port)
                    if port < portNames.count {
                        copy(portNames[port], to: start, at: &count)
                    } else {
                        writeDecimal(Int64(port), to: start, at: &count)
                    }
                case .id: writeDecimal(Int64(event.port), to: start, at: &count)
                case .channel: writeDecimal(Int64(event.channel & 0x0F) + 1, to: start, at: &count)
                case .channel0: writeDecimal(Int64(event.channel & 0x0F), to: start, at: &count)
                case .type: copy(typeNames[Int(event.kind.rawValue)], to: start, at: &count)
                case .note: writeDecimal(Int64(event.data1 & 0x7F), to: start, at: &count)
                case .controller:
                    let controller = event.kind == .controlChange ? Int(event.data1 & 0x7F) : Int(event.parameter)
                    writeDecimal(Int64(controller), to: start, at: &count)
                }
            }
            i += 1
        }
        return count
    }

    @inline(__always)
    private func copy(_ range: OSCByteRange, to start: UnsafeMutableRawPointer, at count: inout Int) {
        (start + count).copyMemory(from: text.baseAddress + range.offset, byteCount: range.count)
        count += range.count
    }
}

// MARK: What compiled addresses are made of

// Shared with the mapping rules' addresses (``OSCMappingTables``): runs into byte stores,
// arrays frozen into fixed buffers, and decimals written without building a string.

/// A run of bytes in one of the tables' byte stores.
struct OSCByteRange: BitwiseCopyable {
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
