import MIDI
import OSC
import Recovery
import Testing

/// `/aseqosc/held` as docs/OSC.md describes it: liblo's bytes for the same message, and only
/// well-formed ones read back.
@Suite struct HeldNotesMessageTests {
    static func bytes(_ message: HeldNotesMessage) -> [UInt8] {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: HeldNotesMessage.maximumSize, alignment: 4)
        defer { buffer.deallocate() }
        let size = message.write(into: buffer)
        return Array(buffer[..<size])
    }

    static func read(_ bytes: [UInt8]) throws -> HeldNotesMessage? {
        try bytes.withUnsafeBytes { raw in
            let view = try OSCMessageView(raw)
            #expect(HeldNotesMessage.isAddressed(view))
            return HeldNotesMessage(view)
        }
    }

    @Test func isTheSameBytesAsLiblosAndReadsBack() throws {
        var notes = NoteSet()
        for note: UInt8 in [127, 60, 0, 64, 63] { notes.insert(note) }
        let message = HeldNotesMessage(periodMilliseconds: 500, channel: 9, notes: notes)
        let bytes = Self.bytes(message)
        #expect(bytes == libloBytes("/aseqosc/held", [.i(500), .i(10), .i(0), .i(60), .i(63), .i(64), .i(127)]))
        #expect(try Self.read(bytes) == message)
        #expect(notes.count == 5)
    }

    @Test func withNoNotesHeldCarriesThePeriodAndTheChannelAlone() throws {
        let message = HeldNotesMessage(periodMilliseconds: 500, channel: 0, notes: NoteSet())
        #expect(Self.bytes(message) == libloBytes("/aseqosc/held", [.i(500), .i(1)]))
        #expect(try Self.read(Self.bytes(message)) == message)
    }

    @Test func allHundredAndTwentyEightNotesFit() throws {
        var notes = NoteSet()
        for note in 0...127 { notes.insert(UInt8(note)) }
        let message = HeldNotesMessage(periodMilliseconds: 500, channel: 15, notes: notes)
        let bytes = Self.bytes(message)
        #expect(bytes.count <= HeldNotesMessage.maximumSize)
        #expect(try Self.read(bytes) == message)
    }

    @Test(arguments: [
        [Argument.i(500)],  // no channel
        [.i(0), .i(1)],  // no period
        [.i(500), .i(0)],  // channel 0
        [.i(500), .i(17)],  // channel 17
        [.i(500), .i(1), .i(128)],  // note 128
        [.i(500), .i(1), .f(60)],  // a float note
    ])
    func malformedArgumentsAreRefused(_ arguments: [Argument]) throws {
        #expect(try Self.read(libloBytes("/aseqosc/held", arguments)) == nil)
    }
}
