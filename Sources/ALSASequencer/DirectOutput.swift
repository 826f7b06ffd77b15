import CALSA
import CSyscall
import Glibc
import MIDI

/// Direct output from our ports to their subscribers through one `snd_seq_event_t` kept ready:
/// the fields every such event shares (subscribers as destination, no queue, fixed size) are
/// set once, so a fixed-size event costs its type, its data and the source port. The OSC -> MIDI
/// path writes every event this way.
///
/// On a `hw` handle (the kernel's sequencer, always so for `default`), a fixed-size event is
/// written to the handle's descriptor directly, as libasound's `hw` backend writes it, in one
/// `write` system call; any other handle type goes through `snd_seq_event_output_direct`.
///
/// Owned by one thread (it reuses its event); SysEx, 14-bit controllers, RPN and NRPN go through
/// ``SequencerClient/send(_:from:to:sysexBytes:)``, which sends the same bytes either way.
public final class DirectOutput {
    private let client: SequencerClient
    private let event: UnsafeMutablePointer<snd_seq_event_t>
    /// The sequencer's descriptor for a `hw` handle, else -1.
    private let descriptor: Int32

    /// Direct output through `client`.
    public init(client: SequencerClient) {
        self.client = client
        event = .allocate(capacity: 1)
        event.initialize(to: snd_seq_event_t())
        aseqosc_ev_set_subs(event)
        aseqosc_ev_set_direct(event)
        descriptor = client.kernelDescriptor ?? -1
    }

    deinit {
        event.deallocate()
    }

    private static var eventSize: UInt { UInt(MemoryLayout<snd_seq_event_t>.size) }

    /// Sends `event` from our port `port` to its subscribers now, as
    /// ``SequencerClient/send(_:from:to:sysexBytes:)`` does.
    ///
    /// - Throws: `ALSAError` (`-EAGAIN` when the output pool is full).
    @inline(__always)
    public func send(_ midi: MIDIEvent, from port: UInt8, sysexBytes: UnsafeRawBufferPointer? = nil) throws(ALSAError) {
        switch midi.kind {
        case .sysex, .controlChange14, .rpn, .nrpn:
            try client.send(midi, from: port, sysexBytes: sysexBytes)
        default:
            // encodeFixedSize writes the type, the flags and the whole data union; the rest was
            // set in init and never changes but the source port.
            SequencerEventEncoder.encodeFixedSize(midi, into: &event.pointee)
            aseqosc_ev_set_source(event, port)
            // On a `hw` handle, all that snd_seq_event_output_direct does for a fixed-size event:
            // one write of the struct, -errno on failure; without its two call levels and
            // libc's write wrapper.
            let result =
                descriptor >= 0
                ? Int32(truncatingIfNeeded: aseqosc_write_now(descriptor, event, Self.eventSize))
                : snd_seq_event_output_direct(client.handle, event)
            try check(result, "snd_seq_event_output_direct")
        }
    }
}
