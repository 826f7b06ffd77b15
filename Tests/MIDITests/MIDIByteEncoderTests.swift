import MIDI
import Testing

struct EncodeCase: Sendable, CustomTestStringConvertible {
    var event: MIDIEvent
    var bytes: [UInt8]
    var testDescription: String { event.description }
}

@Suite struct MIDIByteEncoderTests {
    /// One event of every kind but SysEx, with its wire bytes.
    static let everyKind: [EncodeCase] = [
        EncodeCase(event: .noteOff(channel: 2, note: 60, velocity: 40), bytes: [0x82, 60, 40]),
        EncodeCase(event: .noteOn(channel: 15, note: 127, velocity: 0), bytes: [0x9F, 127, 0]),
        EncodeCase(
            event: MIDIEvent(.polyPressure, channel: 1, data1: 61, data2: 70),
            bytes: [0xA1, 61, 70]),
        EncodeCase(
            event: .controlChange(channel: 2, controller: 7, value: 100), bytes: [0xB2, 7, 100]),
        EncodeCase(event: MIDIEvent(.programChange, channel: 3, data1: 5), bytes: [0xC3, 5]),
        EncodeCase(event: MIDIEvent(.channelPressure, channel: 4, data1: 90), bytes: [0xD4, 90]),
        EncodeCase(event: .pitchBend(channel: 5, bend: -200), bytes: [0xE5, 0x38, 0x3E]),
        EncodeCase(
            event: MIDIEvent(.controlChange14, channel: 1, value: 0x1234, parameter: 1),
            bytes: [0xB1, 1, 0x24, 0xB1, 33, 0x34]),
        EncodeCase(
            event: MIDIEvent(.rpn, channel: 0, value: 0x0102, parameter: 0x0003),
            bytes: [0xB0, 101, 0, 0xB0, 100, 3, 0xB0, 6, 2, 0xB0, 38, 2]),
        EncodeCase(
            event: MIDIEvent(.nrpn, channel: 9, value: 16383, parameter: 0x3FFF - 1),
            bytes: [0xB9, 99, 127, 0xB9, 98, 126, 0xB9, 6, 127, 0xB9, 38, 127]),
        EncodeCase(event: MIDIEvent(.mtcQuarterFrame, data1: 0x35), bytes: [0xF1, 0x35]),
        EncodeCase(event: MIDIEvent(.songPosition, value: 16383), bytes: [0xF2, 0x7F, 0x7F]),
        EncodeCase(event: MIDIEvent(.songSelect, data1: 9), bytes: [0xF3, 9]),
        EncodeCase(event: MIDIEvent(.tuneRequest), bytes: [0xF6]),
        EncodeCase(event: MIDIEvent(.clock), bytes: [0xF8]),
        EncodeCase(event: MIDIEvent(.start), bytes: [0xFA]),
        EncodeCase(event: MIDIEvent(.continue), bytes: [0xFB]),
        EncodeCase(event: MIDIEvent(.stop), bytes: [0xFC]),
        EncodeCase(event: MIDIEvent(.activeSensing), bytes: [0xFE]),
        EncodeCase(event: MIDIEvent(.reset), bytes: [0xFF]),
    ]

    @Test func theCasesCoverEveryKind() {
        let kinds = Set(Self.everyKind.map(\.event.kind)).union([.sysex])
        #expect(kinds == Set(MIDIEventKind.allCases))
    }

    @Test(arguments: everyKind)
    func everyKindEncodesToItsWireBytes(_ testCase: EncodeCase) {
        var encoder = MIDIByteEncoder()
        #expect(encoder.encode(testCase.event) == testCase.bytes)
    }

    @Test(arguments: everyKind)
    func encodingThenParsingGivesTheSameEvent(_ testCase: EncodeCase) {
        var encoder = MIDIByteEncoder()
        var parser = MIDIByteParser()
        var assembler = ControllerAssembler(fourteenBitControllers: [1])
        var events: [MIDIEvent] = []
        for var event in parser.parse(encoder.encode(testCase.event))
        where assembler.process(&event) {
            events.append(event)
        }
        #expect(events == [testCase.event])
    }

    /// The wire-format table (status, data bytes, message length) says what the encoder writes:
    /// a one-message kind's bytes are its ``MIDIEvent/wireBytes``, as long as the length its
    /// status byte gives; an assembled kind starts with its status byte.
    @Test(arguments: everyKind)
    func theWireFormatTableAgreesWithTheEncoder(_ testCase: EncodeCase) {
        let event = testCase.event
        #expect(testCase.bytes[0] == event.statusByte)
        let count = event.kind.dataByteCount
        guard count > 0 || testCase.bytes.count == 1 else { return }  // assembled kinds
        #expect(MIDIEvent.messageLength(status: event.statusByte) == 1 + count)
        let (status, data1, data2) = event.wireBytes
        #expect([status, data1, data2].prefix(1 + count) == testCase.bytes[...])
    }

    @Test func sysexEncodesFromTheStoreAndParsesToTheSameBytes() {
        let store = SysExStore(slots: 2, capacity: 2048)
        let message = sysexMessage(length: 1200)
        let reference = try! #require(store.store(message))
        var encoder = MIDIByteEncoder(store: store)
        let bytes = encoder.encode(MIDIEvent(.sysex, sysex: reference))
        #expect(bytes == message)

        let received = SysExStore(slots: 2, capacity: 2048)
        var parser = MIDIByteParser(store: received)
        let events = parser.parse(bytes)
        #expect(events.map(\.kind) == [.sysex])
        #expect(sysexBytes(of: events[0], in: received) == message)
    }

    @Test func sysexWithABogusLengthEncodesToNothing() {
        var encoder = MIDIByteEncoder(store: SysExStore(slots: 1, capacity: 16))
        let bogus = SysExReference(slot: 0, length: .max)
        #expect(encoder.encode(MIDIEvent(.sysex, sysex: bogus)).isEmpty)
    }

    @Test func sysexWithoutItsBytesEncodesToNothing() {
        var encoder = MIDIByteEncoder()
        #expect(
            encoder.encode(MIDIEvent(.sysex, sysex: SysExReference(slot: 0, length: 4))).isEmpty)
        encoder.store = SysExStore(slots: 1, capacity: 16)
        #expect(
            encoder.encode(MIDIEvent(.sysex, sysex: SysExReference(slot: 0, length: 4))).isEmpty)
    }

    @Test(arguments: everyKind)
    func aBufferTooSmallGetsNothing(_ testCase: EncodeCase) {
        var encoder = MIDIByteEncoder()
        var buffer = [UInt8](repeating: 0xAA, count: testCase.bytes.count - 1)
        let count = buffer.withUnsafeMutableBytes { encoder.encode(testCase.event, into: $0) }
        #expect(count == 0)
        #expect(buffer.allSatisfy { $0 == 0xAA })
    }

    @Test func runningStatusIsOffByDefault() {
        var encoder = MIDIByteEncoder()
        let note = MIDIEvent.noteOn(channel: 0, note: 60, velocity: 1)
        #expect(encoder.encode(note) + encoder.encode(note) == [0x90, 60, 1, 0x90, 60, 1])
    }

    @Test func runningStatusOmitsARepeatedStatusAcrossRealtimeOnly() {
        var encoder = MIDIByteEncoder(usesRunningStatus: true)
        let events: [MIDIEvent] = [
            .noteOn(channel: 0, note: 60, velocity: 1),
            MIDIEvent(.clock),
            .noteOn(channel: 0, note: 62, velocity: 2),
            MIDIEvent(.songSelect, data1: 1),
            .noteOn(channel: 0, note: 64, velocity: 3),
            .noteOn(channel: 1, note: 65, velocity: 4),
            MIDIEvent(.rpn, channel: 1, value: 5, parameter: 0),
        ]
        let bytes = events.flatMap { encoder.encode($0) }
        #expect(
            bytes == [
                0x90, 60, 1, 0xF8, 62, 2, 0xF3, 1, 0x90, 64, 3, 0x91, 65, 4,
                0xB1, 101, 0, 100, 0, 6, 0, 38, 5,
            ])
        var parser = MIDIByteParser()
        var assembler = ControllerAssembler()
        var parsed: [MIDIEvent] = []
        for var event in parser.parse(bytes) where assembler.process(&event) {
            parsed.append(event)
        }
        #expect(parsed == events)
    }

    static let outOfRangeBends: [(Int32, [UInt8])] = [
        (-9000, [0xE0, 0, 0]), (9000, [0xE0, 0x7F, 0x7F]),
    ]

    @Test(arguments: outOfRangeBends)
    func pitchBendOutOfRangeIsClamped(_ bend: Int32, _ bytes: [UInt8]) {
        var encoder = MIDIByteEncoder()
        #expect(encoder.encode(.pitchBend(channel: 0, bend: bend)) == bytes)
    }

    @Test func dataBytesAreMaskedToSevenBits() {
        var encoder = MIDIByteEncoder()
        #expect(
            encoder.encode(.noteOn(channel: 0x13, note: 0xBC, velocity: 0xFF)) == [
                0x93, 0x3C, 0x7F,
            ])
    }
}
