import CALSA
import CSyscall
import Glibc

/// The events of a `hw` sequencer handle (the kernel's, always so for `default`) read straight
/// from its descriptor, as libasound's `hw` backend reads them for `snd_seq_event_input`: one
/// `read` brings every waiting event the buffer holds, each followed by its data if it has a
/// variable length (SysEx), without libasound's call levels and libc's `read` wrapper. A buffer
/// of 64 KiB, where libasound's holds 500 events (14,000 bytes): a SysEx longer than the buffer
/// could never be read.
///
/// Used by the input thread only; the events live in memory its owner keeps (a ``FixedBuffer``
/// of ``capacity`` events), so this stays a plain struct that the reader's state can hold.
struct SequencerInputBuffer {
    /// The buffer's size in events (28 bytes each).
    static var capacity: Int { 2340 }

    private let descriptor: Int32
    private let events: UnsafeMutablePointer<snd_seq_event_t>
    /// Events in the buffer, counting a variable-length event's data, and the next one's index.
    private var count = 0
    private var next = 0

    /// Reads `descriptor`, the kernel sequencer's, into `storage`: ``capacity`` events that
    /// outlive this buffer.
    init(descriptor: Int32, storage: UnsafeMutablePointer<snd_seq_event_t>) {
        self.descriptor = descriptor
        events = storage
    }

    /// Whether everything read has been taken.
    var isEmpty: Bool { next >= count }

    /// Reads what the kernel holds for us, in place of anything left: 0, or -errno (`-EAGAIN`:
    /// nothing waiting; `-ENOSPC`: the kernel dropped events because we read too slowly, and
    /// emptied its queue).
    mutating func fill() -> Int32 {
        let bytes = aseqosc_read_now(descriptor, events, UInt(Self.capacity * MemoryLayout<snd_seq_event_t>.size))
        next = 0
        count = bytes > 0 ? bytes / MemoryLayout<snd_seq_event_t>.size : 0
        return bytes < 0 ? Int32(truncatingIfNeeded: bytes) : 0
    }

    /// The next event read, with its data attached if it has a variable length; nil when all
    /// were taken, or when the data it claims runs past what was read (the rest is dropped, as
    /// libasound does).
    mutating func take() -> UnsafeMutablePointer<snd_seq_event_t>? {
        guard next < count else { return nil }
        let event = events + next
        next += 1
        guard aseqosc_ev_is_variable(event) != 0 else { return event }
        let cells = Int(aseqosc_ev_attach_ext_data(event))
        guard cells <= count - next else {
            next = count
            return nil
        }
        next += cells
        return event
    }
}
