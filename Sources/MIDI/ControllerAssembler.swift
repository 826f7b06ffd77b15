import Storage

/// Assembles control changes into ``MIDIEventKind/controlChange14``, ``MIDIEventKind/rpn`` and
/// ``MIDIEventKind/nrpn`` events, per channel, with fixed-size state and no allocation.
///
/// Call ``process(_:)`` on every event in order: it rewrites the event in place and returns
/// whether to keep it. Every input gives at most one output. Events it does not consume pass
/// through unchanged: everything but control changes, the controllers below it does not own, and
/// data entry (6, 38, 96, 97) while no parameter is selected.
///
/// **14-bit controllers** (only those in ``fourteenBitControllers``, since most controllers are
/// MSB-only; controller 6 is always data entry and never paired):
/// - the first half of a pair to arrive (MSB *n* or LSB *n*+32) is held and dropped;
/// - the other half completes the pair: it is rewritten to a ``MIDIEventKind/controlChange14``
///   with ``MIDIEvent/parameter`` *n* and ``MIDIEvent/value`` `MSB << 7 | LSB`.
///   So MSB-then-LSB emits on the LSB, LSB-then-MSB on the MSB.
///
/// **RPN and NRPN**:
/// - CC 101/100 select RPN (number MSB/LSB), 99/98 select NRPN; they are consumed.
///   127/127 (the null parameter) deselects; it is consumed too.
/// - With ``DataEntry/msbThenLSB`` (the default), data entry MSB (6) is held and the data entry
///   LSB (38) emits `MSB << 7 | LSB`; a later LSB alone (fine adjustment) emits again with the
///   held MSB.
/// - With ``DataEntry/msbOnly``, data entry MSB emits `MSB << 7` at once (the LSB reset to 0,
///   as the MIDI 1.0 specification says); a later LSB emits again with the fine value.
/// - Data increment (96) and decrement (97) emit the last value entered for the selected
///   parameter (0 after a new selection) plus or minus 1, clamped to 0...16383; their data byte
///   is ignored.
package struct ControllerAssembler: Sendable {
    /// When data entry emits an RPN or NRPN event.
    package enum DataEntry: Sendable, Hashable {
        /// Emit on data entry LSB (38); the MSB (6) is held until then.
        case msbThenLSB
        /// Emit on data entry MSB (6), for senders that never send the LSB.
        case msbOnly
    }

    /// Bit *n* set: controller *n* (0...31) pairs with *n*+32 into a 14-bit controller.
    var fourteenBitControllers: UInt32
    /// When data entry emits.
    package var dataEntry: DataEntry

    private enum Selection: UInt8, Sendable {
        case none, rpn, nrpn
    }

    private struct ParameterState: Sendable {
        var selection = Selection.none
        var rpnMSB: UInt8 = 127
        var rpnLSB: UInt8 = 127
        var nrpnMSB: UInt8 = 127
        var nrpnLSB: UInt8 = 127
        var dataMSB: UInt8 = 0
        var value: Int32 = 0

        /// The selection and the number, to tell whether a select message changed the parameter.
        var selected: UInt32 {
            let (msb, lsb) = selection == .rpn ? (rpnMSB, rpnLSB) : (nrpnMSB, nrpnLSB)
            return UInt32(selection.rawValue) << 16 | UInt32(msb) << 7 | UInt32(lsb)
        }
    }

    // Index `channel * 32 + n` for MSB controller n; the halves held while a pair is incomplete.
    private var heldMSB = TupleArray512<UInt8>(repeating: 0)
    private var heldLSB = TupleArray512<UInt8>(repeating: 0)
    // Per channel, bit n: a half of pair n is held.
    private var msbPending = TupleArray16<UInt32>(repeating: 0)
    private var lsbPending = TupleArray16<UInt32>(repeating: 0)
    private var parameters = TupleArray16<ParameterState>(repeating: ParameterState())

    /// An assembler pairing `fourteenBitControllers` (each 0...31; others are ignored).
    package init(fourteenBitControllers: [UInt8] = [], dataEntry: DataEntry = .msbThenLSB) {
        var mask: UInt32 = 0
        var i = 0
        while i < fourteenBitControllers.count {
            let controller = fourteenBitControllers[i]
            if controller < 32 { mask |= 1 << controller }
            i += 1
        }
        self.fourteenBitControllers = mask
        self.dataEntry = dataEntry
    }

    /// Whether `controller` (0...31) is paired with `controller + 32`.
    package func isFourteenBit(_ controller: UInt8) -> Bool {
        controller < 32 && controller != 6 && fourteenBitControllers & (1 << controller) != 0
    }

    /// Forgets every held half and parameter selection.
    package mutating func reset() {
        let mask = fourteenBitControllers
        self = ControllerAssembler(dataEntry: dataEntry)
        fourteenBitControllers = mask
    }

    /// Consumes, rewrites or passes `event`; returns `false` when it was consumed (drop it).
    package mutating func process(_ event: inout MIDIEvent) -> Bool {
        guard event.kind == .controlChange, event.channel < 16 else { return true }
        let channel = Int(event.channel)
        let controller = event.data1
        let data = event.data2 & 0x7F
        switch controller {
        case 101, 100, 99, 98:
            select(controller, data, channel: channel)
            return false
        case 6, 38, 96, 97:
            guard parameters[channel].selection != .none else { return true }
            return dataEntry(controller, data, channel: channel, &event)
        case 0..<32 where isFourteenBit(controller):
            return pair(controller, msb: data, channel: channel, &event)
        case 32..<64 where isFourteenBit(controller - 32):
            return pair(controller - 32, lsb: data, channel: channel, &event)
        default:
            return true
        }
    }

    private mutating func pair(_ n: UInt8, msb: UInt8, channel: Int, _ event: inout MIDIEvent)
        -> Bool
    {
        let index = channel * 32 + Int(n)
        let bit: UInt32 = 1 << n
        if lsbPending[channel] & bit != 0 {
            lsbPending[channel] &= ~bit
            event = assembled(
                .controlChange14, from: event, parameter: UInt16(n), msb: msb, lsb: heldLSB[index])
            return true
        }
        heldMSB[index] = msb
        msbPending[channel] |= bit
        return false
    }

    private mutating func pair(_ n: UInt8, lsb: UInt8, channel: Int, _ event: inout MIDIEvent)
        -> Bool
    {
        let index = channel * 32 + Int(n)
        let bit: UInt32 = 1 << n
        if msbPending[channel] & bit != 0 {
            msbPending[channel] &= ~bit
            event = assembled(
                .controlChange14, from: event, parameter: UInt16(n), msb: heldMSB[index], lsb: lsb)
            return true
        }
        heldLSB[index] = lsb
        lsbPending[channel] |= bit
        return false
    }

    private mutating func select(_ controller: UInt8, _ data: UInt8, channel: Int) {
        var state = parameters[channel]
        let previous = state.selected
        switch controller {
        case 101: state.rpnMSB = data
        case 100: state.rpnLSB = data
        case 99: state.nrpnMSB = data
        default: state.nrpnLSB = data
        }
        let isRPN = controller >= 100
        state.selection = isRPN ? .rpn : .nrpn
        let (msb, lsb) = isRPN ? (state.rpnMSB, state.rpnLSB) : (state.nrpnMSB, state.nrpnLSB)
        // 127/127 is the null parameter; NRPN 127/127 is treated the same, as senders use it to
        // close an NRPN too.
        if msb == 127 && lsb == 127 { state.selection = .none }
        if state.selected != previous {
            // Increments must not step from another parameter's value.
            state.dataMSB = 0
            state.value = 0
        }
        parameters[channel] = state
    }

    private mutating func dataEntry(
        _ controller: UInt8, _ data: UInt8, channel: Int, _ event: inout MIDIEvent
    ) -> Bool {
        var state = parameters[channel]
        switch controller {
        case 6:
            state.dataMSB = data
            state.value = Int32(data) << 7
            parameters[channel] = state
            guard dataEntry == .msbOnly else { return false }
        case 38:
            state.value = Int32(state.dataMSB) << 7 | Int32(data)
        case 96:
            state.value = min(state.value + 1, 16383)
        default:
            state.value = max(state.value - 1, 0)
        }
        state.dataMSB = UInt8(truncatingIfNeeded: state.value >> 7)
        parameters[channel] = state
        let isRPN = state.selection == .rpn
        let msb = isRPN ? state.rpnMSB : state.nrpnMSB
        let lsb = isRPN ? state.rpnLSB : state.nrpnLSB
        event = MIDIEvent(
            isRPN ? .rpn : .nrpn, channel: event.channel, value: state.value,
            parameter: UInt16(msb) << 7 | UInt16(lsb), port: event.port, timestamp: event.timestamp)
        return true
    }

    private func assembled(
        _ kind: MIDIEventKind, from event: MIDIEvent, parameter: UInt16, msb: UInt8, lsb: UInt8
    ) -> MIDIEvent {
        MIDIEvent(
            kind, channel: event.channel, value: Int32(msb) << 7 | Int32(lsb), parameter: parameter,
            port: event.port, timestamp: event.timestamp)
    }
}
