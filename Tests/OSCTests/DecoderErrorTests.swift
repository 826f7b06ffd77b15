import OSC
import Testing

/// A malformed packet and the exact error it must produce.
struct Malformed: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let error: OSCDecodeError
    var testDescription: String { name }

    init(_ name: String, _ bytes: [UInt8], _ error: OSCDecodeError) {
        self.name = name
        self.bytes = bytes
        self.error = error
    }
}

private let message = Bytes.string("/a") + Bytes.string(",i") + Bytes.int32(1)

let malformedPackets: [Malformed] = [
    Malformed("empty packet", [], .empty),
    Malformed("3 bytes", [0x2F, 0x61, 0], .sizeNotMultipleOfFour),
    Malformed("valid message plus 1 byte", message + [0], .sizeNotMultipleOfFour),
    Malformed("address without slash", Bytes.string("a") + Bytes.string(","), .addressMustStartWithSlash),
    Malformed("type tags where the address should be", Bytes.string(",i") + Bytes.int32(1), .addressMustStartWithSlash),
    Malformed(
        "misspelt bundle header", Bytes.string("#bundlx") + [0, 0, 0, 0, 0, 0, 0, 1], .addressMustStartWithSlash),
    Malformed("address without NUL", Bytes.raw("/abc"), .unterminatedString),
    Malformed("address padding not zero", Bytes.raw("/a") + [0, 0x78] + Bytes.string(","), .nonZeroPadding),
    Malformed("no type tag string", Bytes.string("/a"), .missingTypeTags),
    Malformed("type tags without comma", Bytes.string("/a") + Bytes.string("i") + Bytes.int32(1), .missingComma),
    Malformed("type tags without NUL", Bytes.string("/a") + Bytes.raw(",iii") + Bytes.raw("abcd"), .unterminatedString),
    Malformed(
        "type tag padding not zero", Bytes.string("/a") + Bytes.raw(",i") + [0, 1] + Bytes.int32(1), .nonZeroPadding),
    Malformed("unknown type tag", Bytes.string("/a") + Bytes.string(",x"), .unknownTypeTag(UInt8(ascii: "x"))),
    Malformed(
        "unknown tag after a good one", Bytes.string("/a") + Bytes.string(",iQ") + Bytes.int32(1),
        .unknownTypeTag(UInt8(ascii: "Q"))),
    Malformed("OSC 1.1 array", Bytes.string("/a") + Bytes.string(",[i]") + Bytes.int32(1), .arrayTagsNotSupported),
    Malformed("int32 missing", Bytes.string("/a") + Bytes.string(",i"), .truncatedArgument),
    Malformed("int64 half there", Bytes.string("/a") + Bytes.string(",h") + Bytes.int32(1), .truncatedArgument),
    Malformed("second argument missing", Bytes.string("/a") + Bytes.string(",if") + Bytes.int32(1), .truncatedArgument),
    Malformed(
        "string argument without NUL", Bytes.string("/a") + Bytes.string(",s") + Bytes.raw("abcd"), .unterminatedString),
    Malformed(
        "string argument padding not zero", Bytes.string("/a") + Bytes.string(",s") + Bytes.raw("ab") + [0, 9],
        .nonZeroPadding),
    Malformed("blob size missing", Bytes.string("/a") + Bytes.string(",b"), .truncatedArgument),
    Malformed(
        "blob longer than the packet", Bytes.string("/a") + Bytes.string(",b") + Bytes.int32(8) + [1, 2, 3, 4],
        .blobLengthOutOfRange),
    Malformed(
        "blob with negative size", Bytes.string("/a") + Bytes.string(",b") + Bytes.int32(-1) + [1, 2, 3, 4],
        .blobLengthOutOfRange),
    Malformed(
        "blob with size Int32.max", Bytes.string("/a") + Bytes.string(",b") + Bytes.int32(.max), .blobLengthOutOfRange),
    Malformed(
        "blob whose padding runs past the end",
        Bytes.string("/a") + Bytes.string(",b") + Bytes.int32(5) + [1, 2, 3, 4], .blobLengthOutOfRange),
    Malformed(
        "blob padding not zero", Bytes.string("/a") + Bytes.string(",b") + Bytes.int32(1) + [1, 0, 7, 0],
        .nonZeroPadding),
    Malformed("bytes after the last argument", message + Bytes.int32(2), .trailingBytes),
    Malformed("arguments with no type tags", Bytes.string("/a") + Bytes.string(",") + Bytes.int32(1), .trailingBytes),
    Malformed("bundle header without time tag", Bytes.string("#bundle"), .truncatedBundleHeader),
    Malformed("bundle header with half a time tag", Bytes.string("#bundle") + Bytes.int32(0), .truncatedBundleHeader),
    Malformed("bundle element of size 0", Bytes.bundleHeader + Bytes.int32(0), .bundleElementSizeOutOfRange),
    Malformed(
        "bundle element of negative size", Bytes.bundleHeader + Bytes.int32(-4) + message, .bundleElementSizeOutOfRange),
    Malformed(
        "bundle element past the end", Bytes.bundleHeader + Bytes.int32(400) + message, .bundleElementSizeOutOfRange),
    Malformed("bundle element size Int32.min", Bytes.bundleHeader + Bytes.int32(.min), .bundleElementSizeOutOfRange),
    Malformed(
        "bundle element size not a multiple of 4", Bytes.bundleHeader + Bytes.int32(6) + message, .sizeNotMultipleOfFour
    ),
    Malformed("bad message inside a bundle", Bytes.bundle(Bytes.string("/a") + Bytes.string("i")), .missingComma),
    Malformed("bad message after a good one in a bundle", Bytes.bundle(message, Bytes.string("/a")), .missingTypeTags),
    Malformed("bundles nested 17 deep", Bytes.nestedBundles(depth: 17), .nestingTooDeep),
    Malformed("bundles nested 1000 deep", Bytes.nestedBundles(depth: 1000), .nestingTooDeep),
]

@Suite("Decoder errors")
struct DecoderErrorTests {
    @Test(arguments: malformedPackets)
    func malformedPacketIsRejectedWithItsError(packet: Malformed) {
        #expect(throws: packet.error) { try OSCPacket.decode(packet.bytes) }
    }

    @Test func bundlesNestedSixteenDeepAreAccepted() throws {
        var packet = try OSCPacket.decode(Bytes.nestedBundles(depth: OSCPacketView.maximumBundleDepth))
        var depth = 0
        while case .bundle(let bundle) = packet, let first = bundle.elements.first {
            packet = first
            depth += 1
        }
        #expect(depth == 16)
        #expect(packet == .message(OSCMessage("/a")))
    }

    @Test func messageViewRejectsABundle() {
        let bundle = Bytes.bundle(message)
        #expect(throws: OSCDecodeError.addressMustStartWithSlash) {
            try bundle.withUnsafeBytes { _ = try OSCMessageView($0) }
        }
    }
}

/// Strings are read a 4-byte word at a time: every place the NUL can fall in a word, and every
/// padding byte after it, gives the same answer as reading byte by byte.
@Suite("String padding, word by word")
struct StringPaddingTests {
    @Test(arguments: 1...9)
    func addressOfEveryLengthReadsBack(length: Int) throws {
        let address = "/" + String(repeating: "x", count: length - 1)
        let bytes = Bytes.string(address) + Bytes.string(",i") + Bytes.int32(7)
        #expect(try OSCPacket.decode(bytes) == .message(OSCMessage(address, [.int32(7)])))
    }

    @Test(arguments: 1...8)
    func nonZeroByteAnywhereInTheAddressPaddingIsRejected(length: Int) {
        let address = Bytes.raw("/" + String(repeating: "x", count: length - 1))
        let padded = Bytes.string(String(decoding: address, as: UTF8.self))
        // Every padding byte after the NUL, in turn, set to 1.
        for position in (address.count + 1)..<padded.count {
            var bytes = padded
            bytes[position] = 1
            #expect(throws: OSCDecodeError.nonZeroPadding) { try OSCPacket.decode(bytes + Bytes.string(",")) }
        }
    }

    @Test func typeTagsRunningToTheEndAreUnterminated() {
        #expect(throws: OSCDecodeError.unterminatedString) {
            try OSCPacket.decode(Bytes.string("/a") + Bytes.raw(",iiiiiii"))
        }
    }
}
