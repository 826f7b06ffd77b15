import MIDI
import TestSupport
import Testing

struct ParseCase: Sendable, CustomTestStringConvertible {
    var bytes: [UInt8]
    var expected: MIDIEvent
    var testDescription: String { expected.description }
}

@Suite struct MIDIByteParserTests {
    static let everyMessage: [ParseCase] = [
        ParseCase(bytes: [0x82, 60, 40], expected: .noteOff(channel: 2, note: 60, velocity: 40)),
        ParseCase(bytes: [0x9F, 60, 100], expected: .noteOn(channel: 15, note: 60, velocity: 100)),
        ParseCase(
            bytes: [0xA1, 61, 70],
            expected: MIDIEvent(.polyPressure, channel: 1, data1: 61, data2: 70)),
        ParseCase(
            bytes: [0xB2, 7, 100], expected: .controlChange(channel: 2, controller: 7, value: 100)),
        ParseCase(bytes: [0xC3, 5], expected: MIDIEvent(.programChange, channel: 3, data1: 5)),
        ParseCase(bytes: [0xD4, 90], expected: MIDIEvent(.channelPressure, channel: 4, data1: 90)),
        ParseCase(bytes: [0xE5, 0x00, 0x40], expected: .pitchBend(channel: 5, bend: 0)),
        ParseCase(bytes: [0xF1, 0x35], expected: MIDIEvent(.mtcQuarterFrame, data1: 0x35)),
        ParseCase(bytes: [0xF2, 0x01, 0x02], expected: MIDIEvent(.songPosition, value: 0x101)),
        ParseCase(bytes: [0xF3, 9], expected: MIDIEvent(.songSelect, data1: 9)),
        ParseCase(bytes: [0xF6], expected: MIDIEvent(.tuneRequest)),
        ParseCase(bytes: [0xF8], expected: MIDIEvent(.clock)),
        ParseCase(bytes: [0xFA], expected: MIDIEvent(.start)),
        ParseCase(bytes: [0xFB], expected: MIDIEvent(.continue)),
        ParseCase(bytes: [0xFC], expected: MIDIEvent(.stop)),
        ParseCase(bytes: [0xFE], expected: MIDIEvent(.activeSensing)),
        ParseCase(bytes: [0xFF], expected: MIDIEvent(.reset)),
    ]

    @Test(arguments: everyMessage)
    func everyMessageTypeParsesToItsEvent(_ testCase: ParseCase) {
        var parser = MIDIByteParser()
        #expect(parser.parse(testCase.bytes) == [testCase.expected])
        #expect(parser.counters == MIDIByteParser.Counters())
    }

    @Test func eventsCarryThePortAndTimestamp() {
        var parser = MIDIByteParser(port: 3)
        let events = parser.parse([0x90, 60, 1, 0xF8], timestamp: 42)
        #expect(events.map(\.port) == [3, 3])
        #expect(events.map(\.timestamp) == [42, 42])
    }

    @Test func noteOnWithZeroVelocityStaysNoteOn() {
        var parser = MIDIByteParser()
        #expect(parser.parse([0x90, 60, 0]) == [.noteOn(channel: 0, note: 60, velocity: 0)])
    }

    static let bends: [([UInt8], Int32)] = [
        ([0x00, 0x00], -8192),
        ([0x7F, 0x3F], -1),
        ([0x00, 0x40], 0),
        ([0x01, 0x40], 1),
        ([0x7F, 0x7F], 8191),
    ]

    @Test(arguments: bends)
    func pitchBendIsCentredAndLSBFirst(_ data: [UInt8], _ bend: Int32) {
        var parser = MIDIByteParser()
        #expect(parser.parse([0xE0] + data) == [.pitchBend(channel: 0, bend: bend)])
    }

    @Test func songPositionTakesTheFullFourteenBits() {
        var parser = MIDIByteParser()
        #expect(parser.parse([0xF2, 0x7F, 0x7F]) == [MIDIEvent(.songPosition, value: 16383)])
    }

    @Test func runningStatusRepeatsTheLastChannelStatus() {
        var parser = MIDIByteParser()
        let events = parser.parse([0x91, 60, 100, 62, 90, 64, 0, 0xC2, 1, 2])
        #expect(
            events == [
                .noteOn(channel: 1, note: 60, velocity: 100),
                .noteOn(channel: 1, note: 62, velocity: 90),
                .noteOn(channel: 1, note: 64, velocity: 0),
                MIDIEvent(.programChange, channel: 2, data1: 1),
                MIDIEvent(.programChange, channel: 2, data1: 2),
            ])
    }

    @Test(arguments: [[UInt8](arrayLiteral: 0xF1, 0x10), [0xF2, 0, 0], [0xF3, 1], [0xF6]])
    func systemCommonCancelsRunningStatus(_ systemCommon: [UInt8]) {
        var parser = MIDIByteParser()
        let events = parser.parse([0x90, 60, 100] + systemCommon + [62, 90])
        #expect(events.count == 2)
        #expect(events.first == .noteOn(channel: 0, note: 60, velocity: 100))
        #expect(parser.counters.strayDataBytes == 2)
    }

    @Test(arguments: [UInt8](arrayLiteral: 0xF8, 0xFA, 0xFB, 0xFC, 0xFE, 0xFF))
    func realtimeInsideANoteOnIsEmittedAtOnceAndLeavesTheNoteIntact(_ realtime: UInt8) {
        var parser = MIDIByteParser()
        let events = parser.parse([0x90, realtime, 60, realtime, 100, 62, realtime, 90])
        #expect(events.map(\.kind.isRealtime) == [true, true, false, true, false])
        #expect(events[2] == .noteOn(channel: 0, note: 60, velocity: 100))
        #expect(events[4] == .noteOn(channel: 0, note: 62, velocity: 90))
    }

    @Test func realtimeInsideSysExIsEmittedAndNotStored() {
        let store = SysExStore(slots: 2, capacity: 64)
        var parser = MIDIByteParser(store: store)
        let events = parser.parse([0xF0, 0x7E, 0xF8, 0x01, 0xFE, 0x02, 0xF7])
        #expect(events.map(\.kind) == [.clock, .activeSensing, .sysex])
        #expect(sysexBytes(of: events[2], in: store) == [0xF0, 0x7E, 0x01, 0x02, 0xF7])
        #expect(events[2].sysex.length == 5)
    }

    @Test(arguments: [1, 3, 7, 256])
    func sysexSplitIntoChunksKeepsEveryByte(_ chunkSize: Int) {
        let store = SysExStore(slots: 4, capacity: 4096)
        var parser = MIDIByteParser(store: store)
        let message = sysexMessage(length: 1500, seed: chunkSize)
        let events = parse(
            [0x90, 60, 100] + message + [0x80, 60, 0], chunkSize: chunkSize, with: &parser)
        #expect(events.map(\.kind) == [.noteOn, .sysex, .noteOff])
        #expect(sysexBytes(of: events[1], in: store) == message)
    }

    @Test func statusByteInsideSysExDropsTheSysExAndStartsItsOwnMessage() {
        let store = SysExStore(slots: 1, capacity: 64)
        var parser = MIDIByteParser(store: store)
        let events = parser.parse([0xF0, 0x01, 0x02, 0x90, 60, 100])
        #expect(events == [.noteOn(channel: 0, note: 60, velocity: 100)])
        #expect(parser.counters.interruptedSysEx == 1)
        // The slot of the dropped message is free again.
        let next = parser.parse([0xF0, 0x03, 0xF7])
        #expect(next.map(\.kind) == [.sysex])
        #expect(store.droppedCount == 0)
    }

    @Test func sysexLongerThanASlotIsACountedDrop() {
        let store = SysExStore(slots: 2, capacity: 16)
        var parser = MIDIByteParser(store: store)
        let events = parse(
            sysexMessage(length: 17) + sysexMessage(length: 16), chunkSize: 5, with: &parser)
        #expect(events.map(\.sysex.length) == [16])
        #expect(store.droppedTooLong == 1)
    }

    @Test func sysexWithNoFreeSlotIsACountedDrop() {
        let store = SysExStore(slots: 2, capacity: 16)
        var parser = MIDIByteParser(store: store)
        let message = sysexMessage(length: 8)
        let events = parser.parse(message + message + message + [0xF8])
        #expect(events.map(\.kind) == [.sysex, .sysex, .clock])
        #expect(store.droppedNoFreeSlot == 1)
        store.release(events[0].sysex)
        #expect(parser.parse(message).map(\.kind) == [.sysex])
    }

    @Test func sysexWithoutAStoreIsACountedDrop() {
        var parser = MIDIByteParser()
        #expect(parser.parse(sysexMessage(length: 8) + [0xFC]) == [MIDIEvent(.stop)])
        #expect(parser.counters.unstoredSysEx == 1)
        #expect(parser.counters.strayDataBytes == 0)
    }

    @Test func strayDataBytesAreIgnoredAndCounted() {
        var parser = MIDIByteParser()
        #expect(
            parser.parse([1, 2, 3, 0x90, 60, 100]) == [.noteOn(channel: 0, note: 60, velocity: 100)]
        )
        #expect(parser.counters.strayDataBytes == 3)
    }

    @Test(arguments: [UInt8](arrayLiteral: 0xF4, 0xF5, 0xF7))
    func undefinedSystemCommonIsIgnoredAndCancelsRunningStatus(_ status: UInt8) {
        var parser = MIDIByteParser()
        #expect(parser.parse([0x90, 60, 100, status, 62, 90]).count == 1)
        #expect(parser.counters.undefinedStatusBytes == 1)
        #expect(parser.counters.strayDataBytes == 2)
    }

    @Test(arguments: [UInt8](arrayLiteral: 0xF9, 0xFD))
    func undefinedRealtimeIsIgnoredAndLeavesTheMessageIntact(_ status: UInt8) {
        var parser = MIDIByteParser()
        #expect(
            parser.parse([0x90, 60, status, 100]) == [.noteOn(channel: 0, note: 60, velocity: 100)])
        #expect(parser.counters.undefinedStatusBytes == 1)
    }

    @Test func resetForgetsTheMessageInProgress() {
        let store = SysExStore(slots: 1, capacity: 16)
        var parser = MIDIByteParser(store: store)
        #expect(parser.parse([0xF0, 1, 2]).isEmpty)
        parser.reset()
        #expect(parser.parse([3, 0xF7]).isEmpty)
        #expect(parser.parse(sysexMessage(length: 4)).map(\.kind) == [.sysex])
    }

    @Test(arguments: [UInt64(1), 2, 3, 0xDEAD_BEEF])
    func randomBytesNeverCrashAndGiveOnlyWellFormedEvents(_ seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let store = SysExStore(slots: 4, capacity: 256)
        var parser = MIDIByteParser(store: store)
        // Few status bytes make long messages and SysEx likely; many make interruptions likely.
        let statusChance = seed % 2 == 0 ? 2 : 8
        var bytes: [UInt8] = []
        bytes.reserveCapacity(110_000)
        while bytes.count < 100_000 {
            let byte = UInt8.random(in: 0...255, using: &random)
            bytes.append(
                Int.random(in: 0..<statusChance, using: &random) == 0 ? byte | 0x80 : byte & 0x7F)
            // Random bytes rarely frame a whole SysEx, so splice some in (a few too long to store).
            if Int.random(in: 0..<2000, using: &random) == 0 {
                bytes += sysexMessage(
                    length: Int.random(in: 2...300, using: &random), seed: bytes.count)
            }
        }
        var malformed = 0
        var sysexCount = 0
        var start = 0
        while start < bytes.count {
            let end = min(start + Int.random(in: 1...300, using: &random), bytes.count)
            bytes[start..<end].withUnsafeBytes { chunk in
                parser.parse(chunk) { event in
                    if !isWellFormed(event, store: store) { malformed += 1 }
                    if event.kind == .sysex {
                        sysexCount += 1
                        store.release(event.sysex)
                    }
                }
            }
            start = end
        }
        #expect(malformed == 0)
        #expect(sysexCount > 0)
        #expect(store.droppedNoFreeSlot == 0)
    }

    private func isWellFormed(_ event: MIDIEvent, store: SysExStore) -> Bool {
        guard event.data1 < 128, event.data2 < 128, event.channel < 16 else { return false }
        switch event.kind {
        case .pitchBend: return (-8192...8191).contains(event.value)
        case .songPosition: return (0...16383).contains(event.value)
        case .sysex:
            return store.withBytes(event.sysex) { bytes in
                bytes.count >= 2 && bytes.count == Int(event.sysex.length) && bytes.first == 0xF0
                    && bytes.last == 0xF7 && bytes.dropFirst().dropLast().allSatisfy { $0 < 0x80 }
            }
        case .controlChange14, .rpn, .nrpn: return false  // the parser never assembles
        default: return event.value == 0 && event.sysex == .none
        }
    }
}
