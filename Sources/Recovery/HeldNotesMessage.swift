import MIDI
import OSC

/// The recovery message a destination with `recovery: true` is sent (docs/OSC.md, "Recovery"):
/// `/aseqosc/held ,ii[i...]`, the sender's period in milliseconds, a channel (1-16) and the
/// notes the sender holds on it, lowest first. A receiver releases what it sounds for this
/// sender on that channel but is not listed (a note-off the network lost), and everything of a
/// sender it has not heard from for twice the period (a sender that died).
package struct HeldNotesMessage: Equatable, Sendable {
    /// The longest the sender stays silent while it holds notes, in milliseconds.
    var periodMilliseconds: Int32
    /// The channel, 0...15 (1...16 on the wire).
    var channel: UInt8
    /// The notes held on the channel: bit `n` of the 128 is note `n`.
    package var notes: NoteSet

    package init(periodMilliseconds: Int32, channel: UInt8, notes: NoteSet) {
        self.periodMilliseconds = periodMilliseconds
        self.channel = channel
        self.notes = notes
    }

    /// The address, reserved for this protocol (a mapping rule for it would take it over).
    static let address: StaticString = "/aseqosc/held"

    /// The largest message: the address (16 bytes), 130 type tags (132) and 130 ints.
    package static let maximumSize = 16 + 132 + 130 * 4

    /// Writes the message into `buffer`; returns its size, or 0 if it does not fit.
    package func write(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var writer = OSCWriter(buffer)
        writer.beginMessage(address: Self.address, argumentCount: 2 + notes.count)
        writer.append(int32: periodMilliseconds)
        writer.append(int32: Int32(channel) + 1)
        notes.forEachNote { writer.append(int32: Int32($0)) }
        writer.endMessage()
        return (try? writer.finish()) ?? 0
    }

    /// Reads a message at ``address``; nil if its arguments are not a positive period, a
    /// channel 1-16 and notes 0-127, all `i`.
    package init?(_ message: OSCMessageView) {
        guard message.hasOnlyInt32Arguments, message.argumentCount >= 2 else { return nil }
        var arguments = message.arguments
        guard case .int32(let period)? = arguments.next(), period > 0,
            case .int32(let channel)? = arguments.next(), (1...16).contains(channel)
        else { return nil }
        var notes = NoteSet()
        while let argument = arguments.next() {
            guard case .int32(let note) = argument, (0...127).contains(note) else { return nil }
            notes.insert(UInt8(note))
        }
        self.init(periodMilliseconds: period, channel: UInt8(channel - 1), notes: notes)
    }

    /// Whether `message` is at ``address``.
    package static func isAddressed(_ message: OSCMessageView) -> Bool {
        address.withUTF8Buffer { message.address.elementsEqual(UnsafeRawBufferPointer($0)) }
    }
}
