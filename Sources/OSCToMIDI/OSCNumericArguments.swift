import OSC
import OSCMapping

/// The message's arguments as numbers where they are numbers (`i f h d`), read in place.
///
/// Nothing is decoded up front: asking for argument `n` walks the first `n` type tags to its
/// data and loads it big-endian, and an `i` argument never goes through `Double`. Only the
/// first ``capacity`` arguments can be read as numbers.
package struct NumericArguments {
    package static let capacity = 16
    private let bytes: UnsafeRawBufferPointer
    private let typeTags: UnsafeRawBufferPointer
    private let start: Int
    /// How many arguments the message has (numbers or not).
    let count: Int
    /// Every argument is an `i`: argument `n` is the word at `start + 4n`.
    let onlyInt32: Bool

    package init(_ message: OSCMessageView) {
        bytes = message.bytes
        typeTags = message.typeTags
        start = message.argumentsOffset
        count = typeTags.count
        onlyInt32 = message.hasOnlyInt32Arguments
    }

    /// Argument `index` of an all-`i` message, which has at least `index + 1` arguments.
    @inline(__always)
    func fixedWord(_ index: Int) -> Int32 {
        Int32(bitPattern: UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: start + 4 * index, as: UInt32.self)))
    }

    /// Argument `index` of an all-`i` message, or nil past the last (or the ``capacity``).
    @inline(__always)
    private func fixedInt32(_ index: Int) -> Int32? {
        guard index >= 0 && index < count && index < Self.capacity else { return nil }
        return fixedWord(index)
    }

    /// Where argument `index`'s data starts. The view validated every length, so the data is
    /// walked without checks.
    private func offset(_ index: Int) -> Int {
        var offset = start
        var i = 0
        while i < index {
            switch typeTags[i] {
            case OSCTypeTag.int32, OSCTypeTag.float32, OSCTypeTag.midi: offset += 4
            case OSCTypeTag.int64, OSCTypeTag.double, OSCTypeTag.timeTag: offset += 8
            case OSCTypeTag.string:
                var end = offset
                while bytes[end] != 0 { end += 1 }
                offset = OSCWriter.padded(end + 1)
            case OSCTypeTag.blob:
                let size = Int(UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                offset += 4 + OSCWriter.padded(size)
            default: break
            }
            i += 1
        }
        return offset
    }

    static func isNumeric(_ tag: UInt8) -> Bool {
        tag == OSCTypeTag.int32 || tag == OSCTypeTag.float32 || tag == OSCTypeTag.int64 || tag == OSCTypeTag.double
    }

    private func word(_ index: Int) -> UInt32 {
        UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset(index), as: UInt32.self))
    }

    private func doubleWord(_ index: Int) -> UInt64 {
        UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset(index), as: UInt64.self))
    }

    /// The type tag of argument `index` if it is one of the first ``capacity``, else 0.
    private func tag(_ index: Int) -> UInt8 {
        index >= 0 && index < count && index < Self.capacity ? typeTags[index] : 0
    }

    /// Argument `index` as a number, or nil when it is missing or not a number.
    subscript(_ index: Int) -> Double? {
        if onlyInt32 { return fixedInt32(index).map { Double($0) } }
        return switch tag(index) {
        case OSCTypeTag.int32: Double(Int32(bitPattern: word(index)))
        case OSCTypeTag.float32: Double(Float(bitPattern: word(index)))
        case OSCTypeTag.int64: Double(Int64(bitPattern: doubleWord(index)))
        case OSCTypeTag.double: Double(bitPattern: doubleWord(index))
        default: nil
        }
    }

    /// Argument `index` rounded, or nil when it is not a number or (rounded) outside `range`.
    func int(_ index: Int, in range: ClosedRange<Int>) -> Int? {
        if onlyInt32 {
            guard let value = fixedInt32(index) else { return nil }
            return range.contains(Int(value)) ? Int(value) : nil
        }
        if tag(index) == OSCTypeTag.int32 {
            let value = Int(Int32(bitPattern: word(index)))
            return range.contains(value) ? value : nil
        }
        guard let value = self[index], value.isFinite else { return nil }
        let rounded = value.rounded()
        guard rounded >= Double(range.lowerBound), rounded <= Double(range.upperBound) else { return nil }
        return Int(rounded)
    }

    /// Argument `index` as C would hold it in an `int`: rounded, and clamped to Int32 for floats.
    package func int32(_ index: Int) -> Int32? {
        if onlyInt32 { return fixedInt32(index) }
        if tag(index) == OSCTypeTag.int32 { return Int32(bitPattern: word(index)) }
        guard let value = self[index], value.isFinite else { return nil }
        return Int32(max(min(value.rounded(), Double(Int32.max)), Double(Int32.min)))
    }
}
