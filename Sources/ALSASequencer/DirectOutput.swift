import CALSA
import MIDI
import Storage

/// Direct output from our ports to their subscribers through one `snd_seq_event_t` kept ready:
/// the fields every such event shares (subscribers as destination, no queue, fixed size) are
/// set once, so a fixed-size event costs its type, its data and the source port. The OSC -> MIDI
/// path writes every event this way, with `snd_seq_event_output_direct`: one `write` of the
/// event, past libasound's output buffer, which the thread that owns this does not own alone
/// (`snd_seq_control_queue` fills it too).
///
/// Fixed-size events can also be staged, up to ``stageCapacity`` of them, and written in a row
/// by ``writeStaged(_:)`` (the events of an OSC bundle, a chord).
///
/// Owned by one thread (it reuses its event); SysEx, 14-bit controllers, RPN and NRPN go through
/// ``SequencerClient/send(_:from:to:sysexBytes:)``, which sends the same bytes either way.
package final class DirectOutput {
    private let client: SequencerClient
    private var event = snd_seq_event_t()
    /// ``stageCapacity`` events, set up like `event`.
    private let staged: FixedBuffer<snd_seq_event_t>

    /// Direct output through `client`.
    package init(client: SequencerClient) {
        self.client = client
        aseqosc_ev_set_subs(&event)
        aseqosc_ev_set_direct(&event)
        staged = FixedBuffer(repeating: event, count: Self.stageCapacity)
    }

    /// How many events ``stage(_:from:at:)`` can hold.
    package static let stageCapacity = 64

    /// Whether events of `kind` can be staged: all but SysEx, 14-bit controllers, RPN and NRPN,
    /// which take more than one fixed-size event.
    @inline(__always)
    package static func canStage(_ kind: MIDIEventKind) -> Bool {
        switch kind {
        case .sysex, .controlChange14, .rpn, .nrpn: false
        default: true
        }
    }

    /// Encodes `midi` (a kind ``canStage(_:)`` allows) from our port `port` into staging slot
    /// `index` (below ``stageCapacity``), to be written by ``writeStaged(_:)``.
    @inline(__always)
    package func stage(_ midi: MIDIEvent, from port: UInt8, at index: Int) {
        let slot = staged.baseAddress + index
        SequencerEventEncoder.encodeFixedSize(midi, into: &slot.pointee)
        aseqosc_ev_set_source(slot, port)
    }

    /// Writes the staged events in `range`, in order, until the kernel refuses one. Returns how
    /// many went out, and the error that stopped the next one, if any.
    package func writeStaged(_ range: Range<Int>) -> (written: Int, error: ALSAError?) {
        var index = range.lowerBound
        while index < range.upperBound {
            let result = snd_seq_event_output_direct(client.handle, staged.baseAddress + index)
            guard result >= 0 else {
                return (index - range.lowerBound, ALSAError(code: result, call: "snd_seq_event_output_direct"))
            }
            index += 1
        }
        return (range.count, nil)
    }

    /// Sends `event` from our port `port` to its subscribers now, as
    /// ``SequencerClient/send(_:from:to:sysexBytes:)`` does.
    ///
    /// - Throws: `ALSAError` (`-EAGAIN` when the output pool is full).
    @inline(__always)
    package func send(_ midi: MIDIEvent, from port: UInt8, sysexBytes: UnsafeRawBufferPointer? = nil) throws(ALSAError)
    {
        guard Self.canStage(midi.kind) else {
            try client.send(midi, from: port, sysexBytes: sysexBytes)
            return
        }
        // encodeFixedSize writes the type, the flags and the whole data union; the rest was
        // set in init and never changes but the source port.
        SequencerEventEncoder.encodeFixedSize(midi, into: &event)
        aseqosc_ev_set_source(&event, port)
        try check(snd_seq_event_output_direct(client.handle, &event), "snd_seq_event_output_direct")
    }
}
