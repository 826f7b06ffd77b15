import OSC
import Testing

@Suite("Zero-copy views")
struct MessageViewTests {
    @Test func messageViewReadsAddressTagsAndArgumentsInPlace() throws {
        let bytes = try OSCMessage(
            "/synth/1",
            [
                .int32(-7), .float32(0.25), .string("abc"), .blob([9, 8]), .int64(1 << 40), .double(-2.5),
                .timeTag(.immediately), .true, .false, .nil, .impulse,
                .midi(port: 1, status: 0x90, data1: 60, data2: 127),
            ]
        ).serialize()
        try bytes.withUnsafeBytes { raw in
            guard case .message(let view) = try OSCPacketView(raw) else {
                Issue.record("not a message")
                return
            }
            #expect(Array(view.address) == Array("/synth/1".utf8))
            #expect(Array(view.typeTags) == Array("ifsbhdtTFNIm".utf8))
            #expect(view.argumentCount == 12)
            // The string and blob point into the packet rather than being copied out of it.
            var arguments = view.arguments
            guard case .int32(-7) = arguments.next(), case .float32(0.25) = arguments.next(),
                case .string(let string) = arguments.next(), case .blob(let blob) = arguments.next(),
                case .int64(1 << 40) = arguments.next(), case .double(-2.5) = arguments.next(),
                case .timeTag(.immediately) = arguments.next(), case .true = arguments.next(),
                case .false = arguments.next(), case .nil = arguments.next(), case .impulse = arguments.next(),
                case .midi(1, 0x90, 60, 127) = arguments.next()
            else {
                Issue.record("arguments differ")
                return
            }
            #expect(arguments.next() == nil)
            #expect(Array(string) == Array("abc".utf8))
            #expect(Array(blob) == [9, 8])
            #expect(string.baseAddress.map { raw.baseAddress! <= $0 && $0 < raw.baseAddress! + raw.count } == true)
        }
    }

    @Test func bundleViewIteratesNestedElements() throws {
        let packet = OSCPacket.bundle(
            OSCBundle(
                timeTag: OSCTimeTag(seconds: 5, fraction: 0),
                [.message(OSCMessage("/a")), .bundle(OSCBundle(timeTag: .immediately, [.message(OSCMessage("/b"))]))]))
        let bytes = try packet.serialize()
        try bytes.withUnsafeBytes { raw in
            guard case .bundle(let bundle) = try OSCPacketView(raw) else {
                Issue.record("not a bundle")
                return
            }
            #expect(bundle.timeTag == OSCTimeTag(seconds: 5, fraction: 0))
            var addresses: [String] = []
            for element in bundle.elements {
                switch element {
                case .message(let message): addresses.append(message.addressString)
                case .bundle(let nested):
                    for case .message(let message) in nested.elements { addresses.append(message.addressString) }
                }
            }
            #expect(addresses == ["/a", "/b"])
        }
    }

    // Speed is measured by `aseqosc-bench` and callgrind (BENCHMARKS.md), not here: a timed
    // test only measures how busy the machine is.
    @Test func decodingOneBufferManyTimesGivesTheSameValuesEachTime() throws {
        let bytes = try OSCMessage("/midi/note_on", [.int32(1), .int32(60), .float32(0.8)]).serialize()
        var sum: Int64 = 0
        try bytes.withUnsafeBytes { raw in
            for _ in 0..<10_000 {
                guard case .message(let view) = try OSCPacketView(raw) else { continue }
                for case .int32(let value) in view.arguments { sum += Int64(value) }
            }
        }
        #expect(sum == 10_000 * 61)
    }
}
