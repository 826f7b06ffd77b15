import OSCMapping
import Storage

/// The parts of an address between `/`s, found once, read in place.
package struct AddressParts {
    /// The most parts recorded; an address with more has `count` past this and matches nothing.
    package static let capacity = 8
    private let address: UnsafeRawBufferPointer
    private var starts = TupleArray8<Int>(repeating: 0)
    private var ends = TupleArray8<Int>(repeating: 0)
    private(set) var count = 0

    package init(_ address: UnsafeRawBufferPointer) {
        self.address = address
        guard address.first == UInt8(ascii: "/") else { return }
        var start = 1
        while true {
            var end = start
            while end < address.count, address[end] != UInt8(ascii: "/") { end += 1 }
            if count < Self.capacity {
                starts[count] = start
                ends[count] = end
            }
            count += 1
            if end >= address.count { break }
            start = end + 1
        }
    }

    /// Part `index` (below ``capacity``).
    func part(_ index: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: address[starts[index]..<ends[index]])
    }

    func equals(_ index: Int, _ literal: StaticString) -> Bool {
        OSCToMIDITranslator.equal(part(index), literal)
    }
}

extension OSCToMIDITranslator {
    package static func equal(_ bytes: UnsafeRawBufferPointer, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        let text = literal.utf8Start
        var i = 0
        while i < bytes.count {
            if bytes[i] != text[i] { return false }
            i += 1
        }
        return true
    }

    /// A plain decimal number of at most 5 digits, or nil.
    package static func decimal(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 5 else { return nil }
        var value = 0
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            i += 1
        }
        return value
    }
}
