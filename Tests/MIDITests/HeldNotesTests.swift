import MIDI
import Testing

/// The one note-state type: a channel's notes as a ``NoteSet``, and ``HeldNotes`` as sixteen of
/// them, kept by note-ons, note-offs and the channel mode controllers.
@Suite struct HeldNotesTests {
    @Test(arguments: [[], [0], [63, 64], [0, 1, 62, 63, 64, 65, 126, 127], Array(0...127)] as [[UInt8]])
    func aNoteSetHoldsItsNotesOnEitherSideOfBit64(_ notes: [UInt8]) {
        var set = NoteSet()
        for note in notes { set.insert(note) }
        #expect(set.count == notes.count && set.isEmpty == notes.isEmpty)
        #expect((0...127).filter { set.contains($0) } == notes)
        var listed: [UInt8] = []
        set.forEachNote { listed.append($0) }
        #expect(listed == notes, "lowest first")
        for note in notes { set.remove(note) }
        #expect(set.isEmpty && set == NoteSet())
    }

    @Test func heldNotesKeepEachChannelAsItsOwnNoteSet() {
        var held = HeldNotes()
        held.track(.noteOn(channel: 0, note: 60, velocity: 100))
        held.track(.noteOn(channel: 0, note: 100, velocity: 100))
        held.track(.noteOn(channel: 9, note: 36, velocity: 1))
        held.track(.noteOn(channel: 9, note: 38, velocity: 0))  // velocity 0: an off
        held.hold(channel: 15, note: 127)
        var channel0 = NoteSet()
        channel0.insert(60)
        channel0.insert(100)
        #expect(held.notes(onChannel: 0) == channel0)
        #expect(held.notes(onChannel: 9).count == 1 && held.notes(onChannel: 9).contains(36))
        #expect(held.notes(onChannel: 15).contains(127) && held.notes(onChannel: 1).isEmpty)
        #expect(held.count == 4 && !held.isEmpty)
        #expect(held.isHeld(channel: 0, note: 100) && !held.isHeld(channel: 1, note: 100))

        held.track(.noteOff(channel: 0, note: 60))
        held.release(channel: 15, note: 127)
        #expect(held.notes(onChannel: 0).count == 1 && held.notes(onChannel: 15).isEmpty)
        held.track(.controlChange(channel: 0, controller: 123, value: 0))
        #expect(held.notes(onChannel: 0).isEmpty && held.count == 1)
    }

    @Test func releasingAllSendsEachNoteOffLowestChannelAndNoteFirst() {
        var held = HeldNotes()
        for (channel, note) in [(3, 64), (0, 127), (3, 2), (0, 0), (15, 63)] as [(UInt8, UInt8)] {
            held.track(.noteOn(channel: channel, note: note, velocity: 90))
        }
        var offs: [String] = []
        held.releaseAll { offs.append("\($0.channel):\($0.data1)") }
        #expect(offs == ["0:0", "0:127", "3:2", "3:64", "15:63"])
        #expect(held.isEmpty && held == HeldNotes())
    }
}
