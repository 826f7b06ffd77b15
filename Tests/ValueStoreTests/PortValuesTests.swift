import MIDI
import Testing

@testable import ValueStore

private func cc(_ controller: UInt8, _ value: UInt8, channel: UInt8 = 0) -> MIDIEvent {
    .controlChange(channel: channel, controller: controller, value: value)
}

private func cc14(_ controller: UInt16, _ value: Int32, channel: UInt8 = 0) -> MIDIEvent {
    MIDIEvent(.controlChange14, channel: channel, value: value, parameter: controller)
}

private func rpn(_ number: UInt16, _ value: Int32, channel: UInt8 = 0) -> MIDIEvent {
    MIDIEvent(.rpn, channel: channel, value: value, parameter: number)
}

private func nrpn(_ number: UInt16, _ value: Int32, channel: UInt8 = 0) -> MIDIEvent {
    MIDIEvent(.nrpn, channel: channel, value: value, parameter: number)
}

/// Every value the table would replay, in order.
func replayAll(_ table: PortValues) -> [MIDIEvent] {
    var events: [MIDIEvent] = []
    var cursor = ReplayCursor()
    table.replay(&cursor, limit: .max) { events.append($0) }
    return events
}

private func changes(_ table: PortValues) -> [ValueSlot] {
    var slots: [ValueSlot] = []
    table.takeChanges { slots.append($0) }
    return slots
}

@Suite struct PortValuesRecordingTests {
    @Test(arguments: [
        (MIDIEvent.controlChange(channel: 3, controller: 7, value: 100), ValueSlot.controller(7, channel: 3)),
        (cc14(1, 0x1234, channel: 2), .controller14(1, channel: 2)),
        (MIDIEvent(.polyPressure, channel: 5, data1: 60, data2: 90), .polyPressure(note: 60, channel: 5)),
        (MIDIEvent(.programChange, channel: 9, data1: 42), .program(channel: 9)),
        (MIDIEvent(.channelPressure, channel: 15, data1: 77), .channelPressure(channel: 15)),
        (MIDIEvent.pitchBend(channel: 0, bend: -1234), .pitchBend(channel: 0)),
    ])
    func everyKindLandsInItsSlotAndComesBackAsTheSameEvent(event: MIDIEvent, slot: ValueSlot) {
        let table = PortValues(port: 4)
        table.record(event)
        var expected = event
        expected.port = 4
        #expect(table.event(at: slot) == expected)
        #expect(slot.kind == event.kind)
        #expect(slot.channel == event.channel)
        #expect(replayAll(table) == [expected])
    }

    @Test func aSlotNeverSetHasNoValueButZeroIsAValue() {
        let table = PortValues(port: 0)
        #expect(table.event(at: .controller(1, channel: 0)) == nil)
        #expect(!table.hasValue(.controller(1, channel: 0)))
        table.record(cc(1, 0))
        #expect(table.hasValue(.controller(1, channel: 0)))
        #expect(table.event(at: .controller(1, channel: 0))?.data2 == 0)
        table.record(MIDIEvent(.programChange, data1: 0))
        #expect(table.event(at: .program(channel: 0))?.data1 == 0)
    }

    @Test(arguments: [Int32(-8192), -1, 0, 1, 8191])
    func pitchBendKeepsItsSignedRange(bend: Int32) {
        let table = PortValues(port: 0)
        table.record(.pitchBend(channel: 1, bend: bend))
        #expect(table.event(at: .pitchBend(channel: 1))?.value == bend)
    }

    @Test func outOfRangeValuesAreClampedNotWrapped() {
        let table = PortValues(port: 0)
        table.record(.pitchBend(channel: 0, bend: 20_000))
        table.record(cc14(2, 70_000))
        table.record(rpn(0, -5))
        #expect(table.event(at: .pitchBend(channel: 0))?.value == 8191)
        #expect(table.event(at: .controller14(2, channel: 0))?.value == 16383)
        #expect(table.parameter(.rpn, channel: 0, number: 0) == 0)
    }

    @Test func channelsAreKeptApart() {
        let table = PortValues(port: 0)
        for channel in UInt8(0)..<16 { table.record(cc(7, channel * 8, channel: channel)) }
        for channel in UInt8(0)..<16 {
            #expect(table.event(at: .controller(7, channel: channel))?.data2 == channel * 8)
        }
    }

    @Test func theLatestValueWins() {
        let table = PortValues(port: 0)
        table.record(cc(74, 10))
        table.record(cc(74, 20))
        table.record(cc(74, 30))
        #expect(replayAll(table) == [cc(74, 30)])
    }

    @Test func notesSystemMessagesAndSysExAreNotKept() {
        let table = PortValues(port: 0)
        for event in [
            MIDIEvent.noteOn(channel: 0, note: 60, velocity: 100), .noteOff(channel: 0, note: 60),
            MIDIEvent(.clock), MIDIEvent(.start), MIDIEvent(.songPosition, value: 16), MIDIEvent(.songSelect, data1: 3),
            MIDIEvent(.mtcQuarterFrame, data1: 0x12), MIDIEvent(.sysex), MIDIEvent(.tuneRequest),
        ] {
            table.record(event)
        }
        #expect(replayAll(table).isEmpty)
        #expect(changes(table).isEmpty)
    }

    @Test(arguments: [UInt8(6), 38, 96, 97, 98, 99, 100, 101, 120, 122, 123, 124, 125, 126, 127])
    func dataEntryParameterSelectAndChannelModeControllersAreNotKeptAsValues(controller: UInt8) {
        let table = PortValues(port: 0)
        table.record(cc(controller, 5))
        #expect(table.event(at: .controller(controller, channel: 0)) == nil)
        #expect(replayAll(table).isEmpty)
        // The last control change still names it, for a method that shows the last message.
        #expect(table.event(at: .last(.controlChange, channel: 0)!) == cc(controller, 5))
    }

    @Test func aFourteenBitControllerReplacesItsSevenBitHalves() {
        let table = PortValues(port: 0)
        table.record(cc(1, 64))
        table.record(cc(33, 5))
        table.record(cc14(1, 100 << 7 | 3))
        #expect(table.event(at: .controller(1, channel: 0)) == nil)
        #expect(table.event(at: .controller(33, channel: 0)) == nil)
        #expect(replayAll(table) == [cc14(1, 100 << 7 | 3)])
    }

    @Test(arguments: [UInt8(1), 33])
    func aSevenBitHalfReplacesTheFourteenBitController(half: UInt8) {
        let table = PortValues(port: 0)
        table.record(cc14(1, 100 << 7 | 3))
        table.record(cc(half, 9))
        #expect(table.event(at: .controller14(1, channel: 0)) == nil)
        #expect(replayAll(table) == [cc(half, 9)])
    }

    @Test func rpnAndNRPNWithTheSameNumberAreDifferentParameters() {
        let table = PortValues(port: 0)
        table.record(rpn(0, 2 << 7))
        table.record(nrpn(0, 999))
        table.record(rpn(0, 12 << 7, channel: 1))
        #expect(table.parameter(.rpn, channel: 0, number: 0) == 2 << 7)
        #expect(table.parameter(.nrpn, channel: 0, number: 0) == 999)
        #expect(table.parameter(.rpn, channel: 1, number: 0) == 12 << 7)
        #expect(table.parameter(.nrpn, channel: 1, number: 0) == nil)
        #expect(table.parameter(.controlChange, channel: 0, number: 0) == nil)
        #expect(table.parameterCount == 3)
        table.record(rpn(0, 7 << 7))
        #expect(table.parameter(.rpn, channel: 0, number: 0) == 7 << 7)
        #expect(table.parameterCount == 3, "a parameter set again is updated in place")
    }

    @Test func aFullParameterTableForgetsTheOldestAndCountsIt() {
        let table = PortValues(port: 0, parameterCapacity: 4)
        for number in UInt16(0)..<4 { table.record(nrpn(number, Int32(number))) }
        #expect(table.parameterEvictions == 0)
        table.record(nrpn(10, 10))
        #expect(table.parameterEvictions == 1)
        #expect(table.parameter(.nrpn, channel: 0, number: 0) == nil, "the oldest went")
        #expect(table.parameter(.nrpn, channel: 0, number: 1) == 1)
        #expect(table.parameter(.nrpn, channel: 0, number: 10) == 10)
        table.record(nrpn(11, 11))
        #expect(table.parameter(.nrpn, channel: 0, number: 1) == nil, "then the next oldest")
        #expect(table.parameterEvictions == 2)
        #expect(table.parameterCount == 4)
        table.record(nrpn(11, 12))
        #expect(table.parameterEvictions == 2, "updating a kept parameter evicts nothing")
    }

    @Test func theLastWordsHoldTheLastMessageOfEachKindWithItsKey() {
        let table = PortValues(port: 2)
        table.record(cc(7, 100, channel: 4))
        table.record(cc(10, 30, channel: 4))
        table.record(cc14(2, 4000, channel: 4))
        table.record(MIDIEvent(.polyPressure, channel: 4, data1: 61, data2: 12))
        table.record(rpn(1, 8192, channel: 4))
        table.record(nrpn(0x1234, 77, channel: 4))
        func last(_ kind: MIDIEventKind) -> MIDIEvent? { table.event(at: .last(kind, channel: 4)!) }
        #expect(last(.controlChange) == MIDIEvent(.controlChange, channel: 4, data1: 10, data2: 30, port: 2))
        #expect(last(.controlChange14) == MIDIEvent(.controlChange14, channel: 4, value: 4000, parameter: 2, port: 2))
        #expect(last(.polyPressure) == MIDIEvent(.polyPressure, channel: 4, data1: 61, data2: 12, port: 2))
        #expect(last(.rpn) == MIDIEvent(.rpn, channel: 4, value: 8192, parameter: 1, port: 2))
        #expect(last(.nrpn) == MIDIEvent(.nrpn, channel: 4, value: 77, parameter: 0x1234, port: 2))
        #expect(ValueSlot.last(.programChange, channel: 0) == nil)
        #expect(ValueSlot.last(.rpn, channel: 4)!.isLast)
    }

    @Test func slotsDescribeThemselves() {
        for index in 0..<ValueSlot.count {
            let slot = ValueSlot(index: index)
            let rebuilt: ValueSlot? =
                if slot.isLast {
                    .last(slot.kind, channel: slot.channel)
                } else {
                    switch slot.kind {
                    case .controlChange: .controller(slot.key, channel: slot.channel)
                    case .controlChange14: .controller14(slot.key, channel: slot.channel)
                    case .polyPressure: .polyPressure(note: slot.key, channel: slot.channel)
                    case .programChange: .program(channel: slot.channel)
                    case .channelPressure: .channelPressure(channel: slot.channel)
                    case .pitchBend: .pitchBend(channel: slot.channel)
                    default: nil
                    }
                }
            #expect(rebuilt == slot, "slot \(index): \(slot)")
        }
    }
}

@Suite struct PortValuesResetTests {
    /// A channel with a value in every kind of slot.
    private func fullChannel(_ channel: UInt8 = 0) -> PortValues {
        let table = PortValues(port: 0)
        for controller in UInt8(0)..<120 where PortValues.keepsValue(ofController: controller) && controller != 2 {
            table.record(cc(controller, 99, channel: channel))
        }
        table.record(cc14(2, 5000, channel: channel))
        table.record(MIDIEvent(.programChange, channel: channel, data1: 5))
        table.record(MIDIEvent(.channelPressure, channel: channel, data1: 50))
        table.record(.pitchBend(channel: channel, bend: 1000))
        table.record(MIDIEvent(.polyPressure, channel: channel, data1: 60, data2: 40))
        table.record(rpn(0, 12 << 7, channel: channel))
        table.record(nrpn(300, 44, channel: channel))
        return table
    }

    @Test func resetAllControllersSetsWhatRP015ResetsToItsDefault() {
        let table = fullChannel()
        table.record(cc(121, 0))
        func value(_ controller: UInt8) -> UInt8? { table.event(at: .controller(controller, channel: 0))?.data2 }
        #expect(value(1) == 0, "modulation")
        #expect(value(11) == 127, "expression")
        #expect(value(43) == 0, "expression LSB")
        for pedal in UInt8(64)...67 { #expect(value(pedal) == 0, "pedal \(pedal)") }
        #expect(value(4) == 0, "foot controller, unnamed by RP-015")
        #expect(table.event(at: .controller14(2, channel: 0))?.value == 0, "breath, 14-bit")
        #expect(table.event(at: .pitchBend(channel: 0))?.value == 0, "bend centred")
        #expect(table.event(at: .channelPressure(channel: 0))?.data1 == 0)
        #expect(table.event(at: .polyPressure(note: 60, channel: 0))?.data2 == 0)
    }

    @Test(arguments: [UInt8(0), 32, 7, 39, 10, 42, 70, 75, 79, 91, 93, 95])
    func resetAllControllersLeavesBankVolumePanSoundAndEffectsControllers(controller: UInt8) {
        let table = fullChannel()
        table.record(cc(121, 0))
        #expect(table.event(at: .controller(controller, channel: 0))?.data2 == 99)
    }

    @Test func resetAllControllersLeavesProgramAndParameters() {
        let table = fullChannel()
        table.record(cc(121, 0))
        #expect(table.event(at: .program(channel: 0))?.data1 == 5)
        #expect(table.parameter(.rpn, channel: 0, number: 0) == 12 << 7)
        #expect(table.parameter(.nrpn, channel: 0, number: 300) == 44)
    }

    @Test func resetAllControllersGivesNoValueToWhatHadNone() {
        let table = PortValues(port: 0)
        table.record(cc(7, 90))
        table.record(cc(121, 0))
        #expect(replayAll(table) == [cc(7, 90)])
        #expect(table.event(at: .controller14(11, channel: 0)) == nil)
    }

    @Test func aFourteenBitExpressionResetsTo127MSB() {
        let table = PortValues(port: 0)
        table.record(cc14(11, 5))
        table.record(cc(121, 0))
        #expect(table.event(at: .controller14(11, channel: 0))?.value == 127 << 7)
    }

    @Test func resetAllControllersTouchesOnlyItsChannel() {
        let table = fullChannel(3)
        let before = replayAll(table)
        table.record(cc(121, 0, channel: 2))
        #expect(replayAll(table) == before)
    }

    @Test func systemResetClearsThePort() {
        let table = fullChannel(7)
        table.record(MIDIEvent(.reset))
        #expect(replayAll(table).isEmpty)
        #expect(table.parameterCount == 0)
        #expect(table.parameter(.rpn, channel: 7, number: 0) == nil)
        #expect(table.event(at: .last(.controlChange, channel: 7)!) == nil)
    }

    @Test func aClearedTableFillsAgainFromTheStart() {
        let table = PortValues(port: 0, parameterCapacity: 2)
        table.record(rpn(0, 1))
        table.record(rpn(1, 1))
        table.record(rpn(2, 1))
        table.clear()
        table.record(rpn(5, 55))
        table.record(rpn(6, 66))
        #expect(table.parameterCount == 2)
        #expect(table.parameter(.rpn, channel: 0, number: 5) == 55)
        #expect(table.parameter(.rpn, channel: 0, number: 6) == 66)
        #expect(table.parameterEvictions == 1, "evictions count since the table was made")
    }
}

@Suite struct PortValuesChangeTests {
    @Test func changesAreReportedOnceLowestFirstAndThenCleared() {
        let table = PortValues(port: 0)
        table.record(.pitchBend(channel: 2, bend: 5))
        table.record(cc(7, 1))
        table.record(cc(7, 2))
        #expect(
            changes(table) == [
                .controller(7, channel: 0), .last(.controlChange, channel: 0)!, .pitchBend(channel: 2),
            ])
        #expect(changes(table).isEmpty)
    }

    @Test func theSameValueAgainIsNoChange() {
        let table = PortValues(port: 0)
        table.record(cc(7, 1))
        _ = changes(table)
        table.record(cc(7, 1))
        #expect(changes(table).isEmpty)
    }

    @Test func aClearedSlotIsAChangeWithNoValue() {
        let table = PortValues(port: 0)
        table.record(MIDIEvent(.programChange, channel: 15, data1: 3))
        _ = changes(table)
        table.clear()
        #expect(changes(table) == [.program(channel: 15)])
        #expect(table.event(at: .program(channel: 15)) == nil)
    }

    @Test func parameterChangesShowAsTheirChannelsLastWord() {
        let table = PortValues(port: 0)
        table.record(nrpn(0x2000, 5, channel: 1))
        #expect(changes(table) == [.last(.nrpn, channel: 1)!])
    }
}

@Suite struct PortValuesReplayTests {
    @Test func replayGoesBankProgramParametersControllersBendPressurePolyChannelByChannel() {
        let table = PortValues(port: 1)
        // Recorded in an order unlike the replay's.
        table.record(MIDIEvent(.polyPressure, channel: 0, data1: 64, data2: 3))
        table.record(MIDIEvent(.channelPressure, channel: 0, data1: 4))
        table.record(.pitchBend(channel: 0, bend: 100))
        table.record(cc14(5, 1000))
        table.record(cc(74, 20))
        table.record(cc(7, 100))
        table.record(nrpn(20, 2))
        table.record(rpn(0, 2 << 7))
        table.record(MIDIEvent(.programChange, data1: 10))
        table.record(cc(32, 1))
        table.record(cc(0, 2))
        table.record(cc(7, 50, channel: 1))
        table.record(MIDIEvent(.programChange, channel: 1, data1: 11))
        let expected: [MIDIEvent] = [
            cc(0, 2), cc(32, 1), MIDIEvent(.programChange, data1: 10), rpn(0, 2 << 7), nrpn(20, 2), cc(7, 100),
            cc(74, 20), cc14(5, 1000), .pitchBend(channel: 0, bend: 100), MIDIEvent(.channelPressure, data1: 4),
            MIDIEvent(.polyPressure, data1: 64, data2: 3),
            MIDIEvent(.programChange, channel: 1, data1: 11), cc(7, 50, channel: 1),
        ].map {
            var event = $0
            event.port = 1
            return event
        }
        #expect(replayAll(table) == expected)
    }

    @Test func aFourteenBitBankSelectGoesBeforeTheProgram() {
        let table = PortValues(port: 0)
        table.record(MIDIEvent(.programChange, data1: 1))
        table.record(cc14(0, 3 << 7 | 1))
        #expect(replayAll(table) == [cc14(0, 3 << 7 | 1), MIDIEvent(.programChange, data1: 1)])
    }

    @Test func rpnsGoBeforeNRPNsEachInTheOrderFirstSet() {
        let table = PortValues(port: 0)
        table.record(nrpn(9, 1))
        table.record(rpn(2, 64 << 7))
        table.record(nrpn(3, 1))
        table.record(rpn(0, 12 << 7))
        #expect(replayAll(table) == [rpn(2, 64 << 7), rpn(0, 12 << 7), nrpn(9, 1), nrpn(3, 1)])
    }

    @Test(arguments: [1, 2, 3, 7, 64])
    func aReplayInPiecesSendsWhatAWholeReplaySends(limit: Int) {
        let table = PortValues(port: 0)
        for channel in UInt8(0)..<16 {
            for controller in stride(from: UInt8(1), to: 120, by: 9) {
                table.record(cc(controller, channel, channel: channel))
            }
            table.record(rpn(UInt16(channel), 5, channel: channel))
            table.record(.pitchBend(channel: channel, bend: Int32(channel)))
        }
        var pieces: [MIDIEvent] = []
        var cursor = ReplayCursor()
        var calls = 0
        while !cursor.isFinished {
            let sent = table.replay(&cursor, limit: limit) { pieces.append($0) }
            #expect(sent <= limit)
            calls += 1
        }
        let whole = replayAll(table)
        #expect(pieces == whole)
        #expect(calls >= whole.count / limit)
        #expect(table.replay(&cursor, limit: limit) { _ in Issue.record("a finished replay sent") } == 0)
    }

    @Test func aReplaySendsTheCurrentValueOfWhatChangedMidWalkOnce() {
        let table = PortValues(port: 0)
        table.record(cc(1, 1))
        table.record(cc(2, 1))
        table.record(cc(3, 1))
        var sent: [MIDIEvent] = []
        var cursor = ReplayCursor()
        table.replay(&cursor, limit: 1) { sent.append($0) }
        table.record(cc(1, 50))  // behind the cursor: went out live
        table.record(cc(3, 60))  // ahead: goes out as it is now
        table.replay(&cursor, limit: .max) { sent.append($0) }
        #expect(sent == [cc(1, 1), cc(2, 1), cc(3, 60)])
    }

    @Test func anEmptyTableReplaysNothing() {
        let table = PortValues(port: 0)
        var cursor = ReplayCursor()
        #expect(table.replay(&cursor, limit: 10) { _ in Issue.record("sent from an empty table") } == 0)
        #expect(cursor.isFinished)
        var unstarted = ReplayCursor()
        #expect(table.replay(&unstarted, limit: 0) { _ in } == 0)
        #expect(!unstarted.isFinished, "a limit of 0 does not move the cursor")
    }

    @Test func replayingIntoAFreshTableReproducesIt() {
        let table = PortValues(port: 0)
        for channel in UInt8(0)..<16 {
            table.record(cc(0, 1, channel: channel))
            table.record(MIDIEvent(.programChange, channel: channel, data1: channel))
            table.record(cc14(7, Int32(channel) * 1000, channel: channel))
            table.record(nrpn(UInt16(channel) << 7, 3, channel: channel))
            table.record(MIDIEvent(.polyPressure, channel: channel, data1: 127, data2: 127))
        }
        let copy = PortValues(port: 0)
        var cursor = ReplayCursor()
        table.replay(&cursor, limit: .max) { copy.record($0) }
        #expect(replayAll(copy) == replayAll(table))
    }
}

@Suite struct LastValueStoreTests {
    @Test func eventsGoToTheirPortsTableAndOthersAreIgnored() {
        let store = LastValueStore(portCount: 3)
        var event = cc(7, 100)
        event.port = 2
        store.record(event)
        event.port = 3
        store.record(event)
        var expected = cc(7, 100)
        expected.port = 2
        #expect(store[2].event(at: .controller(7, channel: 0)) == expected)
        #expect(replayAll(store[0]).isEmpty)
        #expect(replayAll(store[1]).isEmpty)
        #expect(store.ports.map(\.port) == [0, 1, 2])
    }

    @Test func clearingAPortLeavesTheOthers() {
        let store = LastValueStore(portCount: 2, parameterCapacity: 8)
        for port in UInt16(0)..<2 {
            var event = rpn(0, 1)
            event.port = port
            store.record(event)
        }
        store.clear(port: 0)
        store.clear(port: 5)
        #expect(store[0].parameterCount == 0)
        #expect(store[1].parameterCount == 1)
        #expect(store[1].parameterCapacity == 8)
    }

    @Test func memoryPerPortIsWhatTheDocumentationSays() {
        #expect(PortValues.memory() == 21_584)
        #expect(PortValues.memory(parameterCapacity: 1024) == 21_584 + 768 * 8)
    }
}
