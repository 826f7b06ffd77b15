import CALSA
import Glibc
import Storage
import XCTest

@testable import ALSASequencer

/// The reader's own parsing of what a `read` of the sequencer brings (fixed-size events, and
/// variable-length ones followed by their data in whole cells), fed through a pipe here; the
/// ALSA tests read the kernel's.
final class SequencerInputBufferTests: XCTestCase {
    private var pipeEnds: (reader: Int32, writer: Int32) = (-1, -1)

    override func setUp() {
        var ends: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&ends), 0)
        pipeEnds = (ends[0], ends[1])
        _ = fcntl(pipeEnds.reader, F_SETFL, fcntl(pipeEnds.reader, F_GETFL) | O_NONBLOCK)
    }

    override func tearDown() {
        close(pipeEnds.reader)
        close(pipeEnds.writer)
    }

    private static let cell = MemoryLayout<snd_seq_event_t>.size

    private func fixed(_ type: snd_seq_event_type, note: UInt8) -> [UInt8] {
        var event = snd_seq_event_t()
        event.type = snd_seq_event_type_t(type.rawValue)
        event.data.note.note = note
        return withUnsafeBytes(of: event) { Array($0) }
    }

    /// A variable-length event claiming `claimed` bytes, followed by `data` padded to whole cells.
    private func variable(claiming claimed: Int, data: [UInt8]) -> [UInt8] {
        var event = snd_seq_event_t()
        event.type = snd_seq_event_type_t(SND_SEQ_EVENT_SYSEX.rawValue)
        aseqosc_ev_set_variable(&event, UInt32(claimed), nil)
        let padded = data + [UInt8](repeating: 0, count: (Self.cell - data.count % Self.cell) % Self.cell)
        return withUnsafeBytes(of: event) { Array($0) } + padded
    }

    private func send(_ bytes: [UInt8]) {
        XCTAssertEqual(write(pipeEnds.writer, bytes, bytes.count), bytes.count)
    }

    func testEventsComeInOrderWithTheirDataAttached() {
        // 43 bytes: two cells of data, the second one partly padding.
        let sysex: [UInt8] = [0xF0, 0x7D] + Array(0..<40) + [0xF7]
        send(
            fixed(SND_SEQ_EVENT_NOTEON, note: 60) + variable(claiming: sysex.count, data: sysex)
                + fixed(SND_SEQ_EVENT_NOTEOFF, note: 60))
        let storage = FixedBuffer(repeating: snd_seq_event_t(), count: SequencerInputBuffer.capacity)
        var input = SequencerInputBuffer(descriptor: pipeEnds.reader, storage: storage.baseAddress)
        XCTAssertEqual(input.fill(), 0)
        let first = input.take()
        XCTAssertEqual(first.map { UInt32($0.pointee.type) }, SND_SEQ_EVENT_NOTEON.rawValue)
        XCTAssertEqual(first?.pointee.data.note.note, 60)
        guard let second = input.take() else { return XCTFail("no SysEx event") }
        XCTAssertEqual(UInt32(second.pointee.type), SND_SEQ_EVENT_SYSEX.rawValue)
        XCTAssertEqual(Int(aseqosc_ev_ext_length(second)), sysex.count)
        XCTAssertEqual(aseqosc_ev_ext_data(second), UnsafeRawPointer(second + 1))
        let data = UnsafeRawBufferPointer(start: aseqosc_ev_ext_data(second), count: sysex.count)
        XCTAssertEqual(Array(data), sysex)
        let third = input.take()
        XCTAssertEqual(third.map { UInt32($0.pointee.type) }, SND_SEQ_EVENT_NOTEOFF.rawValue)
        XCTAssertNil(input.take())
        XCTAssertTrue(input.isEmpty)
    }

    /// Data that runs past what was read: the events before it are taken, the rest is dropped
    /// (libasound's answer too), and the next read starts afresh.
    func testDataRunningPastTheReadDropsTheRest() {
        send(fixed(SND_SEQ_EVENT_NOTEON, note: 1) + variable(claiming: 100, data: [0xF0, 1, 2, 0xF7]))
        let storage = FixedBuffer(repeating: snd_seq_event_t(), count: SequencerInputBuffer.capacity)
        var input = SequencerInputBuffer(descriptor: pipeEnds.reader, storage: storage.baseAddress)
        XCTAssertEqual(input.fill(), 0)
        XCTAssertEqual(input.take()?.pointee.data.note.note, 1)
        XCTAssertNil(input.take())
        send(fixed(SND_SEQ_EVENT_NOTEON, note: 2))
        XCTAssertEqual(input.fill(), 0)
        XCTAssertEqual(input.take()?.pointee.data.note.note, 2)
        XCTAssertNil(input.take())
    }

    func testNothingWaitingAnswersEAGAIN() {
        let storage = FixedBuffer(repeating: snd_seq_event_t(), count: SequencerInputBuffer.capacity)
        var input = SequencerInputBuffer(descriptor: pipeEnds.reader, storage: storage.baseAddress)
        XCTAssertEqual(input.fill(), -EAGAIN)
        XCTAssertTrue(input.isEmpty)
        XCTAssertNil(input.take())
    }
}

/// The error a user meets when alsa.conf makes the `default` sequencer something other than the
/// kernel's, which aseqosc reads and writes itself (no VM needed: the text is the behaviour).
final class SequencerTypeErrorTests: XCTestCase {
    func testADefaultSequencerOtherThanTheKernelsIsNamedWithWhereToLook() {
        let error = ALSAError(code: -EPROTONOSUPPORT, call: "snd_seq_open")
        XCTAssertTrue(error.isNotTheKernelSequencer)
        XCTAssertFalse(error.isSequencerMissing)
        XCTAssertEqual(
            error.description,
            "the ALSA sequencer 'default' is not the kernel's (hw): aseqosc reads and writes the kernel "
                + "sequencer itself; see the 'seq' definitions in ~/.asoundrc and /etc/asound.conf")
        XCTAssertFalse(ALSAError(code: -EPROTONOSUPPORT, call: "snd_seq_create_simple_port").isNotTheKernelSequencer)
    }
}
