import MIDI

/// Where a replay of a port's values has got to: a position in the fixed order of
/// ``PortValues/replay(_:limit:_:)``, so that a replay can send a few values per wake-up and
/// carry on at the next.
///
/// A cursor names a position, not a value: whatever the slot holds when the walk reaches it
/// is what is sent, so a value that changed mid-walk goes out once, current, and one that
/// changed behind the cursor went out live already.
package struct ReplayCursor: Hashable, Sendable {
    /// The order within a channel, channel 1 to 16.
    ///
    /// What a synth needs, in the order it needs it: bank select before the program (a
    /// receiver applies the bank only at the next program change); the program before any
    /// controller or parameter (a program change may reload the patch and drop what was set
    /// before it); RPNs before NRPNs and both before the controllers they may shape (pitch bend
    /// range before pitch bend); then the controllers, 7-bit and 14-bit, in number order; pitch
    /// bend, channel pressure; poly pressure last, per note.
    enum Phase: Int, Sendable {
        case bank, program, registered, nonRegistered, controllers, controllers14, pitchBend, channelPressure
        case polyPressure
    }

    var channel: UInt8 = 0
    var phase = Phase.bank
    var index = 0

    /// A cursor at the start: channel 1's bank select.
    package init() {}

    /// Whether the walk has passed the last value of channel 16.
    package var isFinished: Bool { channel >= 16 }
}

extension PortValues {
    /// Calls `body` with up to `limit` of the port's values as events, from `cursor` on in the
    /// fixed order ``ReplayCursor`` describes, skipping what has no value, and moves `cursor`
    /// past them. Returns how many it sent; once ``ReplayCursor/isFinished``, 0.
    ///
    /// A 14-bit controller, RPN or NRPN comes as one assembled event: a sink sending to MIDI
    /// splits it (`MIDIEvent.forEachControlChange`). Allocates nothing. Call it on the
    /// writing thread (the owner of the port's direction), after that wake-up's live events.
    @discardableResult
    package func replay(_ cursor: inout ReplayCursor, limit: Int, _ body: (MIDIEvent) -> Void) -> Int {
        var sent = 0
        while sent < limit && !cursor.isFinished {
            if let event = replayEvent(at: cursor) {
                body(event)
                sent += 1
            }
            advance(&cursor)
        }
        return sent
    }

    private func replayEvent(at cursor: ReplayCursor) -> MIDIEvent? {
        let channel = cursor.channel
        let index = cursor.index
        switch cursor.phase {
        case .bank:
            // Bank select MSB, LSB, or both as one 14-bit controller.
            let slot: ValueSlot =
                switch index {
                case 0: .controller(0, channel: channel)
                case 1: .controller(32, channel: channel)
                default: .controller14(0, channel: channel)
                }
            return event(at: slot)
        case .program:
            return event(at: .program(channel: channel))
        case .registered, .nonRegistered:
            guard let event = parameterEntry(index), event.channel == channel,
                (event.kind == .nrpn) == (cursor.phase == .nonRegistered)
            else { return nil }
            return event
        case .controllers:
            // Bank select went first.
            guard index != 0 && index != 32 else { return nil }
            return event(at: .controller(UInt8(index), channel: channel))
        case .controllers14:
            return event(at: .controller14(UInt8(index + 1), channel: channel))
        case .pitchBend:
            return event(at: .pitchBend(channel: channel))
        case .channelPressure:
            return event(at: .channelPressure(channel: channel))
        case .polyPressure:
            return event(at: .polyPressure(note: UInt8(index), channel: channel))
        }
    }

    /// How many positions `phase` has in a channel.
    private func length(of phase: ReplayCursor.Phase) -> Int {
        switch phase {
        case .bank: 3
        case .program, .pitchBend, .channelPressure: 1
        case .registered, .nonRegistered: parameterCapacity
        case .controllers, .polyPressure: 128
        case .controllers14: 31  // 1...31: controller 0 is bank select
        }
    }

    private func advance(_ cursor: inout ReplayCursor) {
        cursor.index += 1
        guard cursor.index >= length(of: cursor.phase) else { return }
        cursor.index = 0
        if let next = ReplayCursor.Phase(rawValue: cursor.phase.rawValue + 1) {
            cursor.phase = next
        } else {
            cursor.phase = .bank
            cursor.channel += 1
        }
    }
}
