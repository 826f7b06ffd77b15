import MIDI
import Testing

/// Runs `events` through `assembler`, keeping what it keeps.
private func assemble(_ events: [MIDIEvent], with assembler: inout ControllerAssembler)
    -> [MIDIEvent]
{
    var kept: [MIDIEvent] = []
    for var event in events where assembler.process(&event) {
        kept.append(event)
    }
    return kept
}

private func cc(_ controller: UInt8, _ value: UInt8, channel: UInt8 = 0) -> MIDIEvent {
    .controlChange(channel: channel, controller: controller, value: value)
}

@Suite struct ControllerAssemblerTests {
    @Test func fourteenBitMSBThenLSBEmitsOnTheLSB() {
        var assembler = ControllerAssembler(fourteenBitControllers: [1])
        let events = assemble([cc(1, 0x12), cc(33, 0x34)], with: &assembler)
        #expect(events == [MIDIEvent(.controlChange14, value: 0x12 << 7 | 0x34, parameter: 1)])
    }

    @Test func fourteenBitLSBThenMSBEmitsOnTheMSB() {
        var assembler = ControllerAssembler(fourteenBitControllers: [1])
        let events = assemble([cc(33, 0x34), cc(1, 0x12)], with: &assembler)
        #expect(events == [MIDIEvent(.controlChange14, value: 0x12 << 7 | 0x34, parameter: 1)])
    }

    @Test func fourteenBitPairsMayInterleaveAcrossControllersAndChannels() {
        var assembler = ControllerAssembler(fourteenBitControllers: [1, 7])
        let events = assemble(
            [
                cc(1, 1), cc(7, 2), cc(1, 3, channel: 5), cc(39, 4), cc(33, 5),
                cc(33, 6, channel: 5),
            ],
            with: &assembler)
        #expect(
            events == [
                MIDIEvent(.controlChange14, value: 2 << 7 | 4, parameter: 7),
                MIDIEvent(.controlChange14, value: 1 << 7 | 5, parameter: 1),
                MIDIEvent(.controlChange14, channel: 5, value: 3 << 7 | 6, parameter: 1),
            ])
    }

    @Test func assembledEventsKeepPortAndTimestampOfTheCompletingEvent() {
        var assembler = ControllerAssembler(fourteenBitControllers: [1])
        var last = cc(33, 0)
        last.port = 4
        last.timestamp = 99
        let events = assemble([cc(1, 0), last], with: &assembler)
        #expect(events.map(\.port) == [4])
        #expect(events.map(\.timestamp) == [99])
    }

    @Test(arguments: [UInt8](arrayLiteral: 1, 7, 33, 39, 64, 120))
    func controllersNotConfiguredAsFourteenBitPassThrough(_ controller: UInt8) {
        var assembler = ControllerAssembler(fourteenBitControllers: [2])
        #expect(assemble([cc(controller, 5)], with: &assembler) == [cc(controller, 5)])
    }

    @Test func dataEntryIsNeverAFourteenBitPair() {
        var assembler = ControllerAssembler(fourteenBitControllers: [6])
        #expect(!assembler.isFourteenBit(6))
        #expect(assemble([cc(6, 1), cc(38, 2)], with: &assembler) == [cc(6, 1), cc(38, 2)])
    }

    static let eventsThatPassThrough: [MIDIEvent] = [
        .noteOn(channel: 0, note: 60, velocity: 100),
        .pitchBend(channel: 1, bend: 5),
        MIDIEvent(.programChange, data1: 3),
        MIDIEvent(.rpn, value: 1, parameter: 2),
        MIDIEvent(.clock),
    ]

    @Test(arguments: eventsThatPassThrough)
    func otherEventsPassThroughUnchanged(_ event: MIDIEvent) {
        var assembler = ControllerAssembler(fourteenBitControllers: [1])
        _ = assemble([cc(101, 0), cc(100, 0), cc(1, 3)], with: &assembler)
        #expect(assemble([event], with: &assembler) == [event])
    }

    @Test func rpnWithDataEntryEmitsOnTheLSB() {
        var assembler = ControllerAssembler()
        let events = assemble([cc(101, 0), cc(100, 0), cc(6, 2), cc(38, 50)], with: &assembler)
        #expect(events == [MIDIEvent(.rpn, value: 2 << 7 | 50, parameter: 0)])
    }

    @Test func dataEntryLSBAloneAdjustsTheHeldMSB() {
        var assembler = ControllerAssembler()
        let events = assemble(
            [cc(101, 0), cc(100, 1), cc(6, 64), cc(38, 0), cc(38, 9)], with: &assembler)
        #expect(events.map(\.value) == [64 << 7, 64 << 7 | 9])
    }

    @Test func nrpnWithDataEntryEmitsOnTheLSB() {
        var assembler = ControllerAssembler()
        let events = assemble(
            [
                cc(99, 3, channel: 9), cc(98, 4, channel: 9), cc(6, 5, channel: 9),
                cc(38, 6, channel: 9),
            ], with: &assembler)
        #expect(events == [MIDIEvent(.nrpn, channel: 9, value: 5 << 7 | 6, parameter: 3 << 7 | 4)])
    }

    @Test func msbOnlyDataEntryEmitsOnTheMSBAndAgainOnAnLSB() {
        var assembler = ControllerAssembler(dataEntry: .msbOnly)
        let events = assemble([cc(101, 0), cc(100, 0), cc(6, 12), cc(38, 3)], with: &assembler)
        #expect(
            events == [
                MIDIEvent(.rpn, value: 12 << 7, parameter: 0),
                MIDIEvent(.rpn, value: 12 << 7 | 3, parameter: 0),
            ])
    }

    @Test func incrementAndDecrementStepTheValueWithinRange() {
        var assembler = ControllerAssembler()
        let events = assemble(
            [
                cc(101, 0), cc(100, 2), cc(97, 0), cc(96, 0), cc(96, 9), cc(6, 127), cc(38, 127),
                cc(96, 0), cc(97, 0),
            ],
            with: &assembler)
        #expect(events.map(\.kind) == Array(repeating: .rpn, count: 6))
        #expect(events.map(\.value) == [0, 1, 2, 16383, 16383, 16382])
        #expect(events.allSatisfy { $0.parameter == 2 })
    }

    @Test func selectingAnotherParameterRestartsIncrementsFromZero() {
        var assembler = ControllerAssembler()
        let events = assemble(
            [cc(99, 0), cc(98, 1), cc(6, 10), cc(38, 0), cc(98, 2), cc(96, 0)], with: &assembler)
        #expect(events.map(\.value) == [10 << 7, 1])
        #expect(events.map(\.parameter) == [1, 2])
    }

    @Test func nullRPNDeselectsSoDataEntryPassesThrough() {
        var assembler = ControllerAssembler()
        let selectThenNull = [cc(101, 0), cc(100, 0), cc(101, 127), cc(100, 127)]
        #expect(assemble(selectThenNull, with: &assembler).isEmpty)
        let dataEntry = [cc(6, 1), cc(38, 2), cc(96, 0), cc(97, 0)]
        #expect(assemble(dataEntry, with: &assembler) == dataEntry)
    }

    @Test func dataEntryWithNoParameterSelectedPassesThrough() {
        var assembler = ControllerAssembler()
        let events = [
            cc(6, 1), cc(38, 2), cc(101, 0, channel: 1), cc(100, 0, channel: 1), cc(6, 3),
        ]
        #expect(assemble(events, with: &assembler) == [cc(6, 1), cc(38, 2), cc(6, 3)])
    }

    @Test func resetForgetsHeldHalvesAndSelectionsButKeepsTheConfiguration() {
        var assembler = ControllerAssembler(fourteenBitControllers: [1], dataEntry: .msbOnly)
        _ = assemble([cc(1, 5), cc(101, 0), cc(100, 0)], with: &assembler)
        assembler.reset()
        #expect(assembler.isFourteenBit(1))
        #expect(assembler.dataEntry == .msbOnly)
        #expect(assemble([cc(33, 1), cc(6, 1)], with: &assembler) == [cc(6, 1)])
    }
}
