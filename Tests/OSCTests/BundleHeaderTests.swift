import OSC
import Testing

/// The one-message bundle of a destination with `latency`: a header written in front of a
/// message already in place gives liblo's bytes for the same bundle.
@Suite struct BundleHeaderTests {
    @Test(arguments: [OSCTimeTag(seconds: 3_970_000_000, fraction: 0x8000_0001), OSCTimeTag(rawValue: 1)])
    func headerAndMessageAreLiblosBundle(_ tag: OSCTimeTag) throws {
        let message = OSCMessage("/midi/keys/1/note_on", [.int32(60), .int32(100)])
        let body = try OSCPacket.message(message).serialize()
        var bytes = [UInt8](repeating: 0xEE, count: OSCTimeTag.bundleHeaderSize) + body
        bytes.withUnsafeMutableBytes { tag.writeBundleHeader(elementSize: body.count, into: $0.baseAddress!) }
        #expect(bytes == Liblo.serialise(.bundle(OSCBundle(timeTag: tag, [.message(message)]))))
    }
}
