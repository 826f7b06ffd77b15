import CALSA
import CSyscall
import Glibc
import MIDI
import Storage

/// Direct output from our ports to their subscribers through one `snd_seq_event_t` kept ready:
/// the fields every such event shares (subscribers as destination, no queue, fixed size) are
/// set once, so a fixed-size event costs its type, its data and the source port. The OSC -> MIDI
/// path writes every event this way.
///
/// A fixed-size event is written to the kernel sequencer's descriptor directly, as libasound's
/// `hw` backend writes it, in one `write` system call.
///
/// Fixed-size events can also be staged, up to ``stageCapacity`` of them, and written together
/// by ``writeStaged(_:)``: the kernel takes any number of events in one `write`, so the events
/// of an OSC bundle (a chord) cost one system call instead of one each.
///
/// Owned by one thread (it reuses its event); SysEx, 14-bit controllers, RPN and NRPN go through
/// ``SequencerClient/send(_:from:to:sysexBytes:)``, which sends the same bytes either way.
public final class DirectOutput {
    private let client: SequencerClient
    private let eventCell = UncheckedCell(snd_seq_event_t())
    private var event: UnsafeMutablePointer<snd_seq_event_t> { eventCell.address }
    /// ``stageCapacity`` events laid out as one `write` sends them, set up like `event`.
    private let stagedEvents: FixedBuffer<snd_seq_event_t>
    private var staged: UnsafeMutablePointer<snd_seq_event_t> { stagedEvents.baseAddress }
    /// The kernel sequencer's descriptor.
    private let descriptor: Int32

    /// Direct output through `client`.
    public init(client: SequencerClient) {
        self.client = client
        aseqosc_ev_set_subs(eventCell.address)
        aseqosc_ev_set_direct(eventCell.address)
        stagedEvents = FixedBuffer(repeating: eventCell.value, count: Self.stageCapacity)
        descriptor = client.kernelDescriptor
    }

    private static var eventSize: UInt { UInt(MemoryLayout<snd_seq_event_t>.size) }

    /// How many events ``stage(_:from:at:)`` can hold.
    public static let stageCapacity = 64

    /// Whether events of `kind` can be staged: all but SysEx, 14-bit controllers, RPN and NRPN,
    /// which take more than one fixed-size event.
    @inline(__always)
    public static func canStage(_ kind: MIDIEventKind) -> Bool {
        switch kind {
        case .sysex, .controlChange14, .rpn, .nrpn: false
        default: true
        }
    }

    /// Encodes `midi` (a kind ``canStage(_:)`` allows) from our port `port` into staging slot
    /// `index` (below ``stageCapacity``), to be written by ``writeStaged(_:)``.
    @inline(__always)
    public func stage(_ midi: MIDIEvent, from port: UInt8, at index: Int) {
        let slot = staged + index
        SequencerEventEncoder.encodeFixedSize(midi, into: &slot.pointee)
        aseqosc_ev_set_source(slot, port)
    }

    /// Writes the staged events in `range`, in order, in one system call on a `hw` handle.
    /// Returns how many went out, and the error that stopped the next one, if any.
    ///
    /// The kernel writes events one by one and stops at the first it refuses; when some went
    /// out before it, the answer is their count and the error is not reported. So fewer
    /// written with no error means: write the rest again to learn what stopped it.
    public func writeStaged(_ range: Range<Int>) -> (written: Int, error: ALSAError?) {
        guard !range.isEmpty else { return (0, nil) }
        let result = aseqosc_write_now(descriptor, staged + range.lowerBound, UInt(range.count) * Self.eventSize)
        guard result >= 0 else { return (0, ALSAError(code: Int32(truncatingIfNeeded: result), call: "write")) }
        return (Int(result) / Int(Self.eventSize), nil)
    }

    /// Sends `event` from our port `port` to its subscribers now, as
    /// ``SequencerClient/send(_:from:to:sysexBytes:)`` does.
    ///
    /// - Throws: `ALSAError` (`-EAGAIN` when the output pool is full).
    @inline(__always)
    public func send(_ midi: MIDIEvent, from port: UInt8, sysexBytes: UnsafeRawBufferPointer? = nil) throws(ALSAError) {
        guard Self.canStage(midi.kind) else {
            try client.send(midi, from: port, sysexBytes: sysexBytes)
            return
        }
        // encodeFixedSize writes the type, the flags and the whole data union; the rest was
        // set in init and never changes but the source port.
        SequencerEventEncoder.encodeFixedSize(midi, into: &event.pointee)
        aseqosc_ev_set_source(event, port)
        // All that snd_seq_event_output_direct does for a fixed-size event: one write of the
        // struct, -errno on failure.
        let result = Int32(truncatingIfNeeded: aseqosc_write_now(descriptor, event, Self.eventSize))
        try check(result, "snd_seq_event_output_direct")
    }
}
