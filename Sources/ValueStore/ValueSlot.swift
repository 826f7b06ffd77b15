import MIDI

/// One word of a port's channel table: which value of which channel it holds.
///
/// A channel has 296 slots: the 128 controllers as they arrived (7-bit), the 32 controllers
/// 0...31 as assembled 14-bit values, poly pressure for each of the 128 notes, program, channel
/// pressure, pitch bend, and one "last" word per kind that has several keys (controllers, 14-bit
/// controllers, poly pressure, RPN, NRPN), holding the last message of that kind with its key.
/// The last words exist for a method that names no key (OSCQuery's `/midi/out/1/cc ,ii`, whose
/// value is the last `[controller, value]` sent).
///
/// RPN and NRPN values are not slots: 2 x 16,384 parameters per channel would not fit, so they
/// live in a bounded table of their own (``PortValues/parameterCapacity``), and a change to one
/// marks the channel's RPN or NRPN last word.
package struct ValueSlot: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The slot's position in its port's table, 0 ..< ``count``.
    package let index: Int

    /// Slots per channel.
    static var perChannel: Int { 296 }
    /// Slots per port (16 channels).
    static var count: Int { 16 * perChannel }

    // Where each group starts in a channel's block. Computed, not stored: a stored static is
    // reached through a lazy-initialisation check, and these are read on every event.
    static var controllers: Int { 0 }
    static var controllers14: Int { 128 }
    static var polyPressures: Int { 160 }
    static var programOffset: Int { 288 }
    static var channelPressureOffset: Int { 289 }
    static var pitchBendOffset: Int { 290 }
    static var lastControllerOffset: Int { 291 }
    static var lastController14Offset: Int { 292 }
    static var lastPolyPressureOffset: Int { 293 }
    static var lastRPNOffset: Int { 294 }
    static var lastNRPNOffset: Int { 295 }

    package init(index: Int) { self.index = index }

    package init(channel: UInt8, offset: Int) {
        index = Int(channel & 15) * Self.perChannel + offset
    }

    /// Controller `number` (0...127) as it arrived, a 7-bit value.
    package static func controller(_ number: UInt8, channel: UInt8) -> ValueSlot {
        ValueSlot(channel: channel, offset: controllers + Int(number & 127))
    }

    /// Controller `number` (0...31) as a 14-bit value, assembled with its LSB `number + 32`.
    package static func controller14(_ number: UInt8, channel: UInt8) -> ValueSlot {
        ValueSlot(channel: channel, offset: controllers14 + Int(number & 31))
    }

    /// Poly pressure of `note` (0...127).
    package static func polyPressure(note: UInt8, channel: UInt8) -> ValueSlot {
        ValueSlot(channel: channel, offset: polyPressures + Int(note & 127))
    }

    /// The program.
    package static func program(channel: UInt8) -> ValueSlot { ValueSlot(channel: channel, offset: programOffset) }

    /// Channel pressure.
    package static func channelPressure(channel: UInt8) -> ValueSlot {
        ValueSlot(channel: channel, offset: channelPressureOffset)
    }

    /// Pitch bend.
    package static func pitchBend(channel: UInt8) -> ValueSlot { ValueSlot(channel: channel, offset: pitchBendOffset) }

    /// The last message of `kind` on `channel`, with its key: `kind` is one of the kinds with
    /// several keys (control change, 14-bit control change, poly pressure, RPN, NRPN); `nil`
    /// for any other.
    package static func last(_ kind: MIDIEventKind, channel: UInt8) -> ValueSlot? {
        switch kind {
        case .controlChange: ValueSlot(channel: channel, offset: lastControllerOffset)
        case .controlChange14: ValueSlot(channel: channel, offset: lastController14Offset)
        case .polyPressure: ValueSlot(channel: channel, offset: lastPolyPressureOffset)
        case .rpn: ValueSlot(channel: channel, offset: lastRPNOffset)
        case .nrpn: ValueSlot(channel: channel, offset: lastNRPNOffset)
        default: nil
        }
    }

    /// The channel, 0...15.
    package var channel: UInt8 { UInt8(truncatingIfNeeded: index / Self.perChannel) }

    var offset: Int { index % Self.perChannel }

    /// The kind of event the slot's value is.
    package var kind: MIDIEventKind {
        switch offset {
        case Self.controllers..<Self.controllers14, Self.lastControllerOffset: .controlChange
        case Self.controllers14..<Self.polyPressures, Self.lastController14Offset: .controlChange14
        case Self.polyPressures..<Self.programOffset, Self.lastPolyPressureOffset: .polyPressure
        case Self.programOffset: .programChange
        case Self.channelPressureOffset: .channelPressure
        case Self.pitchBendOffset: .pitchBend
        case Self.lastRPNOffset: .rpn
        default: .nrpn
        }
    }

    /// Whether this is a kind's last word (the key is in the value) rather than one key's slot.
    package var isLast: Bool { offset >= Self.lastControllerOffset }

    /// The controller or note of a key's slot; 0 for the others.
    var key: UInt8 {
        let offset = offset
        switch offset {
        case Self.controllers..<Self.controllers14: return UInt8(offset - Self.controllers)
        case Self.controllers14..<Self.polyPressures: return UInt8(offset - Self.controllers14)
        case Self.polyPressures..<Self.programOffset: return UInt8(offset - Self.polyPressures)
        default: return 0
        }
    }

    package static func < (lhs: ValueSlot, rhs: ValueSlot) -> Bool { lhs.index < rhs.index }

    package var description: String {
        let name = isLast ? "last \(kind)" : kind.description
        switch offset {
        case Self.controllers..<Self.programOffset: return "\(name) \(key) ch \(channel + 1)"
        default: return "\(name) ch \(channel + 1)"
        }
    }
}
