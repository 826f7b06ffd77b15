/// One argument read in place; strings and blobs point into the packet.
package enum OSCArgumentView {
    case int32(Int32)
    case float32(Float)
    /// The string's UTF-8 bytes, without the NUL.
    case string(UnsafeRawBufferPointer)
    case blob(UnsafeRawBufferPointer)
    case int64(Int64)
    case double(Double)
    case timeTag(OSCTimeTag)
    case `true`
    case `false`
    case `nil`
    case impulse
    case midi(port: UInt8, status: UInt8, data1: UInt8, data2: UInt8)

    /// Reads the argument for `tag`; the one place argument data is decoded, for validation
    /// and for iteration alike.
    static func read(_ tag: UInt8, from reader: inout OSCByteReader) throws(OSCDecodeError) -> OSCArgumentView {
        switch tag {
        case OSCTypeTag.int32:
            return .int32(Int32(bitPattern: try reader.readUInt32(orThrow: .truncatedArgument)))
        case OSCTypeTag.float32:
            return .float32(Float(bitPattern: try reader.readUInt32(orThrow: .truncatedArgument)))
        case OSCTypeTag.string:
            return .string(try reader.readString())
        case OSCTypeTag.blob:
            return .blob(try reader.readBlob())
        case OSCTypeTag.int64:
            return .int64(Int64(bitPattern: try reader.readUInt64(orThrow: .truncatedArgument)))
        case OSCTypeTag.double:
            return .double(Double(bitPattern: try reader.readUInt64(orThrow: .truncatedArgument)))
        case OSCTypeTag.timeTag:
            return .timeTag(OSCTimeTag(rawValue: try reader.readUInt64(orThrow: .truncatedArgument)))
        case OSCTypeTag.true: return .true
        case OSCTypeTag.false: return .false
        case OSCTypeTag.nil: return .nil
        case OSCTypeTag.impulse: return .impulse
        case OSCTypeTag.midi:
            let word = try reader.readUInt32(orThrow: .truncatedArgument)
            return .midi(
                port: UInt8(truncatingIfNeeded: word >> 24), status: UInt8(truncatingIfNeeded: word >> 16),
                data1: UInt8(truncatingIfNeeded: word >> 8), data2: UInt8(truncatingIfNeeded: word))
        case UInt8(ascii: "["), UInt8(ascii: "]"):
            throw .arrayTagsNotSupported
        default:
            throw .unknownTypeTag(tag)
        }
    }
}

/// A validated message read in place, without allocating: the OSC-to-MIDI path reads
/// incoming packets through this.
package struct OSCMessageView {
    /// The message's bytes.
    package let bytes: UnsafeRawBufferPointer
    /// The address (or address pattern) as UTF-8, without the NUL.
    package let address: UnsafeRawBufferPointer
    /// The type tags, without the leading `,`.
    package let typeTags: UnsafeRawBufferPointer
    /// Where the first argument's data starts in ``bytes``; each argument's data follows the
    /// one before, as wide as its type tag says (strings and blobs padded to 4 bytes).
    package let argumentsOffset: Int
    /// Whether every argument is an `i` (none counts): then argument `n` is the big-endian
    /// word at ``argumentsOffset`` + 4n, and readers need not walk the type tags.
    package let hasOnlyInt32Arguments: Bool

    /// Validates `bytes` as one message (not a bundle).
    package init(_ bytes: UnsafeRawBufferPointer) throws(OSCDecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        guard bytes.count % 4 == 0 else { throw .sizeNotMultipleOfFour }
        guard bytes[0] == UInt8(ascii: "/") else { throw .addressMustStartWithSlash }
        var reader = OSCByteReader(bytes)
        let address = try reader.readString()
        try self.init(bytes, address: address, reader: &reader)
    }

    /// Validates `bytes` as one message whose address, `addressLength` bytes, is already known
    /// to be valid: the address, its NUL and its padding equal, byte for byte, the start of a
    /// message validated before (``init(_:)`` checked them). Everything after them is checked as
    /// ``init(_:)`` checks it, with the same errors, so for such bytes the two initialisers
    /// agree; this one skips reading the address again.
    ///
    /// - Precondition: the padded address fits in `bytes` (only that is checked here).
    package init(_ bytes: UnsafeRawBufferPointer, validatedAddressLength addressLength: Int) throws(OSCDecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        guard bytes.count % 4 == 0 else { throw .sizeNotMultipleOfFour }
        let padded = (addressLength + 4) & ~3
        precondition(addressLength > 0 && padded <= bytes.count, "not a validated address")
        var reader = OSCByteReader(bytes, offset: padded)
        try self.init(bytes, address: UnsafeRawBufferPointer(rebasing: bytes[0..<addressLength]), reader: &reader)
    }

    /// Checks the type tags and the arguments after `address`, where `reader` stands.
    private init(_ bytes: UnsafeRawBufferPointer, address: UnsafeRawBufferPointer, reader: inout OSCByteReader)
        throws(OSCDecodeError)
    {
        self.address = address
        guard reader.remaining > 0 else { throw .missingTypeTags }
        guard bytes[reader.offset] == UInt8(ascii: ",") else { throw .missingComma }
        // The commonest tag strings, up to three `i`s, compared a word at a time: the same
        // checks as the general path below, which they skip.
        if let count = Self.int32TagCount(bytes, at: reader.offset) {
            let tagsEnd = reader.offset + (count == 3 ? 8 : 4)
            self.bytes = bytes
            typeTags = UnsafeRawBufferPointer(rebasing: bytes[reader.offset + 1..<reader.offset + 1 + count])
            argumentsOffset = tagsEnd
            hasOnlyInt32Arguments = true
            guard bytes.count - tagsEnd >= 4 * count else { throw .truncatedArgument }
            guard bytes.count - tagsEnd == 4 * count else { throw .trailingBytes }
            return
        }
        let tagString = try reader.readString()
        // The tag string holds at least its `,`.
        typeTags = UnsafeRawBufferPointer(start: tagString.baseAddress! + 1, count: tagString.count - 1)
        // Every tag is checked before any data, so the error names the tag, not a symptom of it.
        // The same pass adds up the data the fixed-size arguments take.
        var fixedSize = 0
        var hasVariableSize = false
        var onlyInt32 = true
        var i = 0
        while i < typeTags.count {
            let tag = typeTags[i]
            switch tag {
            case OSCTypeTag.int32: fixedSize += 4
            case OSCTypeTag.float32, OSCTypeTag.midi:
                fixedSize += 4
                onlyInt32 = false
            case OSCTypeTag.int64, OSCTypeTag.double, OSCTypeTag.timeTag:
                fixedSize += 8
                onlyInt32 = false
            case OSCTypeTag.true, OSCTypeTag.false, OSCTypeTag.nil, OSCTypeTag.impulse: onlyInt32 = false
            case OSCTypeTag.string, OSCTypeTag.blob: hasVariableSize = true
            case UInt8(ascii: "["), UInt8(ascii: "]"): throw .arrayTagsNotSupported
            default: throw .unknownTypeTag(tag)
            }
            i += 1
        }
        self.bytes = bytes
        argumentsOffset = reader.offset
        hasOnlyInt32Arguments = onlyInt32 && !hasVariableSize
        if !hasVariableSize {
            // Numbers and the like: the data must fill the rest of the message exactly.
            guard reader.remaining >= fixedSize else { throw .truncatedArgument }
            guard reader.remaining == fixedSize else { throw .trailingBytes }
            return
        }
        i = 0
        while i < typeTags.count {
            _ = try OSCArgumentView.read(typeTags[i], from: &reader)
            i += 1
        }
        guard reader.remaining == 0 else { throw .trailingBytes }
    }

    /// How many `i` tags the tag string at `offset` holds when it is `,`, `,i`, `,ii` or `,iii`
    /// with its NUL padding, else nil (any other tag string, or too few bytes to tell).
    @inline(__always)
    private static func int32TagCount(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int? {
        guard bytes.count - offset >= 4 else { return nil }
        // Byte k of the string is bits 8k..8k+7 of `word`, whatever the machine's order.
        let word = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        switch word {
        case 0x0000_002C: return 0
        case 0x0000_692C: return 1
        case 0x0069_692C: return 2
        case 0x6969_692C:
            guard bytes.count - offset >= 8, bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) == 0
            else { return nil }
            return 3
        default: return nil
        }
    }

    /// How many arguments the message carries.
    package var argumentCount: Int { typeTags.count }

    /// The address as a `String` (allocates; for logs and tests, not the hot path).
    package var addressString: String { String(decoding: address, as: UTF8.self) }

    /// The arguments, in order.
    package var arguments: Arguments {
        Arguments(reader: OSCByteReader(bytes, offset: argumentsOffset), typeTags: typeTags, index: 0)
    }

    /// Iterates a message's arguments without allocating.
    package struct Arguments: Sequence, IteratorProtocol {
        var reader: OSCByteReader
        let typeTags: UnsafeRawBufferPointer
        var index: Int

        package mutating func next() -> OSCArgumentView? {
            guard index < typeTags.count else { return nil }
            // Validated when the view was made; stopping is the safe answer if it somehow fails.
            guard let argument = try? OSCArgumentView.read(typeTags[index], from: &reader) else {
                index = typeTags.count
                return nil
            }
            index += 1
            return argument
        }
    }
}
