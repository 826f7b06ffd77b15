/// What a queued packet carries, so that a ``TCPLink`` can put note-offs first and leave out
/// late note-ons after an outage: a note-on, a note-off (or note-on with velocity 0) and its
/// channel and note, or anything else.
@frozen
package struct OSCPacketKind: Hashable, Sendable, BitwiseCopyable {
    /// Kind in bits 16 and up (0 other, 1 note-on, 2 note-off); channel and note below.
    package let raw: UInt32

    @inlinable public init(raw: UInt32) { self.raw = raw }

    /// Anything that is not a note: controllers, bends, held-notes messages.
    package static let other = OSCPacketKind(raw: 0)

    @inlinable
    public static func noteOn(channel: UInt8, note: UInt8) -> OSCPacketKind {
        OSCPacketKind(raw: 1 << 16 | UInt32(channel & 15) << 7 | UInt32(note & 127))
    }

    @inlinable
    public static func noteOff(channel: UInt8, note: UInt8) -> OSCPacketKind {
        OSCPacketKind(raw: 2 << 16 | UInt32(channel & 15) << 7 | UInt32(note & 127))
    }

    var isNoteOn: Bool { raw >> 16 == 1 }
    var isNoteOff: Bool { raw >> 16 == 2 }
    /// The channel (0...15) of a note-on or note-off.
    var channel: UInt8 { UInt8(truncatingIfNeeded: raw >> 7 & 15) }
    /// The note (0...127) of a note-on or note-off.
    var note: UInt8 { UInt8(truncatingIfNeeded: raw & 127) }
    /// Index into the drop counters: 0 note-on, 1 note-off, 2 other.
    var counterIndex: Int { isNoteOn ? 0 : isNoteOff ? 1 : 2 }
}
