import OSC
import TestSupport
import Testing

/// Stream framing on its own: OSC 1.0 length prefixes and OSC 1.1 SLIP, however the bytes are
/// cut, and every way a stream can break.
@Suite struct StreamDeframerTests {
    /// Three packets, with bytes SLIP must escape (END 0xC0, ESC 0xDB) inside a blob.
    static let packets: [[UInt8]] = [
        try! OSCPacket.message(OSCMessage("/midi/synth/1/note_on", [.int32(60), .int32(100)])).serialize(),
        try! OSCPacket.message(OSCMessage("/sysex", [.blob([0xC0, 0xDB, 0xDC, 0xDD, 0xC0, 0xC0, 0xDB])])).serialize(),
        try! OSCPacket.bundle(
            OSCBundle(timeTag: .immediately, [.message(OSCMessage("/a", [.float32(0.5)]))])
        ).serialize(),
    ]

    static func lengthPrefixed(_ packets: [[UInt8]]) -> [UInt8] {
        packets.flatMap { TestSupport.lengthPrefixed($0) }
    }

    /// RFC 1055 encoding: END after each packet, and before it too when `doubleEnd`.
    static func slip(_ packets: [[UInt8]], doubleEnd: Bool = true) -> [UInt8] {
        packets.flatMap { slipFramed($0, doubleEnd: doubleEnd) }
    }

    /// Feeds `chunks` in order; the packets handed on, the error that stopped it, the framing seen.
    static func deframe(_ chunks: [[UInt8]], capacity: Int = 1024) -> (
        packets: [[UInt8]], error: OSCStreamError?, framing: OSCStreamFraming?, finish: OSCStreamError?
    ) {
        var deframer = OSCStreamDeframer(capacity: capacity)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        defer { buffer.deallocate() }
        var packets: [[UInt8]] = []
        var error: OSCStreamError?
        for chunk in chunks where error == nil {
            error = chunk.withUnsafeBytes { bytes in deframer.feed(bytes, into: buffer) { packets.append(Array($0)) } }
        }
        return (packets, error, deframer.framing, deframer.finish())
    }

    static let streams: [(String, OSCStreamFraming, [UInt8])] = [
        ("length-prefixed", .lengthPrefixed, lengthPrefixed(packets)),
        ("SLIP, END before and after", .slip, slip(packets)),
        ("SLIP, END after only (liblo 0.31)", .slip, slip(packets, doubleEnd: false)),
    ]

    @Test(arguments: streams)
    func wholeStreamsGiveEveryPacketInOrder(_ name: String, _ framing: OSCStreamFraming, _ stream: [UInt8]) {
        let result = Self.deframe([stream])
        #expect(result.packets == Self.packets, "\(name)")
        #expect(result.framing == framing)
        #expect(result.error == nil && result.finish == nil)
    }

    @Test(arguments: streams)
    func aSplitAtEveryByteBoundaryGivesTheSamePackets(_ name: String, _: OSCStreamFraming, _ stream: [UInt8]) {
        for split in 1..<stream.count {
            let result = Self.deframe([Array(stream[..<split]), Array(stream[split...])])
            #expect(result.packets == Self.packets, "\(name), split at \(split)")
            #expect(result.error == nil && result.finish == nil, "\(name), split at \(split)")
        }
        let oneByteAtATime = Self.deframe(stream.map { [$0] })
        #expect(oneByteAtATime.packets == Self.packets, "\(name), one byte at a time")
    }

    @Test func slipEscapesDecodeToTheBytesTheyStandFor() {
        let result = Self.deframe([[0xC0, 0x2F, 0xDB, 0xDC, 0xDB, 0xDD, 0x00, 0xC0]])
        #expect(result.packets == [[0x2F, 0xC0, 0xDB, 0x00]])
    }

    @Test func emptyFramesAreSkipped() {
        #expect(
            Self.deframe([[0xC0, 0xC0, 0xC0] + Self.slip([Self.packets[0]]) + [0xC0]]).packets == [Self.packets[0]])
        #expect(
            Self.deframe([[0, 0, 0, 0] + Self.lengthPrefixed([Self.packets[0]]) + [0, 0, 0, 0]]).packets == [
                Self.packets[0]
            ])
    }

    @Test(arguments: [0x41, 0xFF, 0x01, 0xDB] as [UInt8])
    func aFirstByteOfNeitherFramingStopsTheStream(_ first: UInt8) {
        let result = Self.deframe([[first] + Self.slip(Self.packets), Self.slip(Self.packets)])
        #expect(result.packets.isEmpty)
        #expect(result.error == .unknownFraming(firstByte: first))
        #expect(result.finish == .unknownFraming(firstByte: first), "the error sticks")
    }

    @Test func aBadSLIPEscapeStopsTheStreamAfterTheGoodPackets() {
        let result = Self.deframe([
            Self.slip([Self.packets[0]]) + [0xC0, 0x2F, 0xDB, 0x41, 0x00, 0xC0] + Self.slip(Self.packets)
        ])
        #expect(result.packets == [Self.packets[0]])
        #expect(result.error == .badEscape(0x41))
    }

    @Test func aLengthThatIsNotWholeWordsStopsTheStream() {
        let result = Self.deframe([
            Self.lengthPrefixed([Self.packets[0]]) + [0, 0, 0, 10] + Array(repeating: 0x2F, count: 10)
        ])
        #expect(result.packets == [Self.packets[0]])
        #expect(result.error == .badLength(10))
    }

    @Test func anOversizedLengthPrefixStopsTheStreamBeforeItsBody() {
        // 0x00FFFFFC: nearly 16 MiB announced; refused on the prefix alone, nothing buffered.
        let result = Self.deframe([[0x00, 0xFF, 0xFF, 0xFC, 0x2F]], capacity: 64)
        #expect(result.error == .oversized(0xFF_FFFC))
        #expect(result.packets.isEmpty)
    }

    @Test func aPacketOfExactlyTheCapacityPassesAndOneMoreByteDoesNot() throws {
        let exact = try OSCPacket.message(OSCMessage("/b", [.blob(Array(repeating: 0xC0, count: 48))])).serialize()
        #expect(exact.count == 60)
        for stream in [Self.lengthPrefixed([exact]), Self.slip([exact]), Self.slip([exact], doubleEnd: false)] {
            #expect(Self.deframe([stream], capacity: 60).packets == [exact])
            let over = Self.deframe([stream], capacity: 59)
            #expect(over.packets.isEmpty)
            #expect(over.error == .oversized(60))
        }
    }

    @Test func anEndlessSLIPPacketStopsAtTheCapacity() {
        let flood = [UInt8](repeating: 0x2F, count: 4096)
        let result = Self.deframe([flood, flood, flood], capacity: 1000)
        #expect(result.error == .oversized(1001))
    }

    @Test(arguments: streams)
    func aStreamCutOffInsideAPacketIsTruncated(_ name: String, _ framing: OSCStreamFraming, _ stream: [UInt8]) {
        // Where the first packet's frame ends: after its prefix and body, or its body and END(s).
        let overhead = framing == .lengthPrefixed ? 4 : stream[0] == 0xC0 ? 2 : 1
        let firstEnd = Self.packets[0].count + overhead
        for cut in [firstEnd + 2, firstEnd + 5, stream.count - 1] {
            let result = Self.deframe([Array(stream[..<cut])])
            #expect(result.packets.count < Self.packets.count, "\(name), cut at \(cut)")
            #expect(result.error == nil)
            #expect(result.finish == .truncated, "\(name), cut at \(cut)")
        }
        #expect(Self.deframe([Array(stream[..<firstEnd])]).finish == nil, "\(name): cut right after a packet")
    }

    @Test func randomBytesInRandomPiecesNeverHandOnMoreThanTheCapacity() {
        var random = SplitMix64(seed: 0x5EED_511B)
        for round in 0..<500 {
            var stream = (0..<Int(random.next() % 3000)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            // Half the streams start like a real one, so the garbage reaches each framing's states.
            if round % 2 == 0, !stream.isEmpty { stream[0] = [0x00, 0xC0, 0x2F][Int(random.next() % 3)] }
            var chunks: [[UInt8]] = []
            var index = 0
            while index < stream.count {
                let size = min(Int(random.next() % 300) + 1, stream.count - index)
                chunks.append(Array(stream[index..<index + size]))
                index += size
            }
            let result = Self.deframe(chunks, capacity: 256)
            #expect(result.packets.allSatisfy { !$0.isEmpty && $0.count <= 256 })
            #expect(result.packets.reduce(0) { $0 + $1.count } <= stream.count)
        }
    }
}
