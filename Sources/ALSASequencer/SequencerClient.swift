import CALSA
import Endpoints
import Glibc
import MIDI
import Synchronization

/// The direction of a port aseqosc creates on its own client.
package enum BridgePortDirection: Sendable {
    /// Other clients write MIDI into it (writable, subscribable): aseqosc reads from it.
    case input
    /// aseqosc writes MIDI out of it to subscribers (readable, subscribable).
    case output
}

/// A client of the ALSA sequencer: owns one `snd_seq_t` handle, opened non-blocking (a
/// ``SequencerReader`` makes its reads wait while it runs).
///
/// Methods are not thread-safe by themselves: the bridge confines each client to its threads
/// (one reader, one writer) as libasound allows for a duplex handle. The one exception is the
/// reader's `stop()`, which may write one fixed-size event from any thread: a single `write`
/// of a whole event, which the kernel takes whole.
package final class SequencerClient: @unchecked Sendable {
    // @unchecked Sendable: libasound allows one thread reading and another writing the same
    // duplex handle; the callers keep to that, and the Swift-side state (the announcements
    // port, the reads' mode) is atomic or behind a lock.

    /// The raw handle, for the modules in this package that read and write events.
    let handle: OpaquePointer
    /// This client's number, as other clients see it.
    package let clientID: UInt8
    /// The kernel sequencer's descriptor behind the handle, whose blocking flag
    /// ``setReadsWait(_:)`` sets for ``SequencerReader``'s waiting reads.
    let kernelDescriptor: Int32
    /// The port ``subscribeToAnnouncements()`` created, or -1: where ``SequencerReader`` sends
    /// the event that wakes its blocking `read`.
    private let announcements = Atomic<Int>(-1)
    /// While reads of the descriptor wait (``setReadsWait(_:)``), its flags from before; the
    /// lock also keeps a write that must not wait (``withWritesNotWaiting(_:)``) and a change
    /// of the input pool from interleaving with a change of mode.
    private let flagsBeforeWaiting = Mutex<Int32?>(nil)

    /// Opens a sequencer client named `name`.
    ///
    /// - Throws: `ALSAError`; ``ALSAError/isSequencerMissing`` tells the case of a machine with
    ///   no `/dev/snd/seq`, ``ALSAError/isNotTheKernelSequencer`` a `default` sequencer that
    ///   alsa.conf makes something other than the kernel's (`hw`, the only type libasound has).
    package init(name: String) throws(ALSAError) {
        aseqosc_silence_alsa_errors()
        var opened: OpaquePointer?
        try check(snd_seq_open(&opened, "default", SND_SEQ_OPEN_DUPLEX, SND_SEQ_NONBLOCK), "snd_seq_open")
        guard let opened else { throw ALSAError(code: -ENOMEM, call: "snd_seq_open") }
        var descriptor = pollfd()
        do throws(ALSAError) {
            guard snd_seq_type(opened) == SND_SEQ_TYPE_HW,
                snd_seq_poll_descriptors(opened, &descriptor, 1, Int16(POLLIN)) == 1
            else { throw ALSAError(code: -EPROTONOSUPPORT, call: "snd_seq_open") }
            try check(snd_seq_set_client_name(opened, name), "snd_seq_set_client_name")
            let id = try check(snd_seq_client_id(opened), "snd_seq_client_id")
            clientID = UInt8(truncatingIfNeeded: id)
        } catch {
            snd_seq_close(opened)
            throw error
        }
        handle = opened
        kernelDescriptor = descriptor.fd
    }

    deinit {
        snd_seq_close(handle)
    }

    /// Changes the name other clients see for this client.
    package func rename(_ name: String) throws(ALSAError) {
        try check(snd_seq_set_client_name(handle, name), "snd_seq_set_client_name")
    }

    /// Creates a port on this client and returns its port number.
    package func createPort(name: String, direction: BridgePortDirection) throws(ALSAError) -> UInt8 {
        let capabilities: Int32 =
            switch direction {
            case .input: SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE
            case .output: SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ
            }
        let type = SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_SOFTWARE | SND_SEQ_PORT_TYPE_APPLICATION
        let port = try check(
            snd_seq_create_simple_port(handle, name, UInt32(capabilities), UInt32(type)),
            "snd_seq_create_simple_port")
        return UInt8(truncatingIfNeeded: port)
    }

    /// Removes a port this client created; the kernel drops its subscriptions.
    package func deletePort(_ port: UInt8) throws(ALSAError) {
        try check(snd_seq_delete_simple_port(handle, Int32(port)), "snd_seq_delete_simple_port")
    }

    /// Every port of every client, in address order, this client's own included.
    package func ports() throws(ALSAError) -> [PortInfo] {
        var clientInfo: OpaquePointer?
        var portInfo: OpaquePointer?
        try check(snd_seq_client_info_malloc(&clientInfo), "snd_seq_client_info_malloc")
        defer { snd_seq_client_info_free(clientInfo) }
        try check(snd_seq_port_info_malloc(&portInfo), "snd_seq_port_info_malloc")
        defer { snd_seq_port_info_free(portInfo) }

        var result: [PortInfo] = []
        snd_seq_client_info_set_client(clientInfo, -1)
        while snd_seq_query_next_client(handle, clientInfo) >= 0 {
            let client = snd_seq_client_info_get_client(clientInfo)
            let clientName = String(cString: snd_seq_client_info_get_name(clientInfo))
            let isKernel = snd_seq_client_info_get_type(clientInfo) == SND_SEQ_KERNEL_CLIENT
            let card = snd_seq_client_info_get_card(clientInfo)
            snd_seq_port_info_set_client(portInfo, client)
            snd_seq_port_info_set_port(portInfo, -1)
            while snd_seq_query_next_port(handle, portInfo) >= 0 {
                let port = snd_seq_port_info_get_port(portInfo)
                result.append(
                    PortInfo(
                        address: PortAddress(
                            client: UInt8(truncatingIfNeeded: client), port: UInt8(truncatingIfNeeded: port)),
                        clientName: clientName,
                        portName: String(cString: snd_seq_port_info_get_name(portInfo)),
                        capabilities: PortCapabilities(rawValue: snd_seq_port_info_get_capability(portInfo)),
                        typeBits: snd_seq_port_info_get_type(portInfo),
                        isKernelClient: isKernel,
                        card: card >= 0 ? card : nil))
            }
        }
        return result.sorted { $0.address < $1.address }
    }

    /// Subscribes our port `port` to events from `source` (`aconnect source us:port`).
    package func connect(from source: PortAddress, to port: UInt8) throws(ALSAError) {
        try check(
            snd_seq_connect_from(handle, Int32(port), Int32(source.client), Int32(source.port)),
            "snd_seq_connect_from")
    }

    /// Subscribes `destination` to events from our port `port` (`aconnect us:port destination`).
    package func connect(from port: UInt8, to destination: PortAddress) throws(ALSAError) {
        try check(
            snd_seq_connect_to(handle, Int32(port), Int32(destination.client), Int32(destination.port)),
            "snd_seq_connect_to")
    }

    /// Removes a subscription made with ``connect(from:to:)-(PortAddress,UInt8)``.
    package func disconnect(from source: PortAddress, to port: UInt8) throws(ALSAError) {
        try check(
            snd_seq_disconnect_from(handle, Int32(port), Int32(source.client), Int32(source.port)),
            "snd_seq_disconnect_from")
    }

    /// Removes a subscription made with ``connect(from:to:)-(UInt8,PortAddress)``.
    package func disconnect(from port: UInt8, to destination: PortAddress) throws(ALSAError) {
        try check(
            snd_seq_disconnect_to(handle, Int32(port), Int32(destination.client), Int32(destination.port)),
            "snd_seq_disconnect_to")
    }
}

extension SequencerClient {
    /// The longest SysEx piece written as one sequencer event, the size the kernel's own rawmidi
    /// converter uses, so a long message never exhausts the client's output pool at once.
    package static let sysexChunkSize = 256

    /// Sends `event` from our port `port` to its subscribers (or to `destination`), right away,
    /// bypassing queues. SysEx bytes come from `sysexBytes` and go out in
    /// ``sysexChunkSize``-byte pieces; 14-bit controllers, RPN and NRPN go out as their control
    /// change sequences.
    ///
    /// - Throws: `ALSAError` (`-EAGAIN` when the output pool is full in non-blocking mode).
    package func send(
        _ event: MIDIEvent, from port: UInt8, to destination: PortAddress? = nil,
        sysexBytes: UnsafeRawBufferPointer? = nil
    ) throws(ALSAError) {
        var raw = snd_seq_event_t()
        switch event.kind {
        case .sysex, .controlChange14, .rpn, .nrpn:
            break
        default:
            // Every other event is one fixed-size event: encoded into the cleared `raw` and
            // written in this frame (the common case, one call per event).
            SequencerEventEncoder.encodeFixedSize(event, into: &raw)
            try write(&raw, from: port, to: destination)
            return
        }
        if event.isAssembledController {
            // As plain control changes: the kernel's converter for raw MIDI ports (virmidi,
            // USB) silently drops CONTROL14/REGPARAM/NONREGPARAM events, and every receiver
            // understands the control change sequence.
            var failure: ALSAError?
            event.forEachControlChange { cc in
                guard failure == nil else { return }
                SequencerEventEncoder.encode(cc, into: &raw)
                do throws(ALSAError) { try write(&raw, from: port, to: destination) } catch { failure = error }
            }
            if let failure { throw failure }
            return
        }
        if event.kind == .sysex, let sysexBytes, sysexBytes.count > Self.sysexChunkSize {
            var offset = 0
            while offset < sysexBytes.count {
                let end = min(offset + Self.sysexChunkSize, sysexBytes.count)
                SequencerEventEncoder.encode(
                    event, into: &raw, sysexBytes: UnsafeRawBufferPointer(rebasing: sysexBytes[offset..<end]))
                try write(&raw, from: port, to: destination)
                offset = end
            }
            return
        }
        SequencerEventEncoder.encode(event, into: &raw, sysexBytes: sysexBytes)
        try write(&raw, from: port, to: destination)
    }

    @inline(__always)
    private func write(_ raw: inout snd_seq_event_t, from port: UInt8, to destination: PortAddress?)
        throws(ALSAError)
    {
        aseqosc_ev_set_source(&raw, port)
        if let destination {
            aseqosc_ev_set_dest(&raw, destination.client, destination.port)
        } else {
            aseqosc_ev_set_subs(&raw)
        }
        aseqosc_ev_set_direct(&raw)
        try check(snd_seq_event_output_direct(handle, &raw), "snd_seq_event_output_direct")
    }

    /// Sends an event of `type` with no data from our port `port` to that same port, straight
    /// into our own input queue (``SequencerReader/stop()``'s wake-up); false if the kernel
    /// refused it. Any thread: one fixed-size event in a single `write`.
    @discardableResult
    package func sendToOurselves(_ type: UInt8, port: UInt8) -> Bool {
        var raw = snd_seq_event_t()
        aseqosc_ev_set_bare(&raw, snd_seq_event_type_t(type))
        do {
            try write(&raw, from: port, to: PortAddress(client: clientID, port: port))
            return true
        } catch {
            return false
        }
    }

    /// The most events the kernel queues for this client to read (its input pool); past it,
    /// senders get `-EAGAIN` and the events are lost. The kernel's default is 200, its maximum
    /// 2000.
    ///
    /// - Throws: `ALSAError`, `-EBUSY` while a ``SequencerReader`` waits in `read`: the kernel
    ///   resizes the queue only when no read is under way, and would hold this client's other
    ///   calls (writes among them) until the next event arrived.
    package func setInputPool(_ events: Int) throws(ALSAError) {
        try flagsBeforeWaiting.withLock { flagsBeforeWaiting throws(ALSAError) in
            guard flagsBeforeWaiting == nil else {
                throw ALSAError(code: -EBUSY, call: "snd_seq_set_client_pool_input")
            }
            try check(snd_seq_set_client_pool_input(handle, events), "snd_seq_set_client_pool_input")
        }
    }

    /// Switches between non-blocking (the default: the bridge never waits on the kernel) and
    /// blocking writes (`aseqosc send`, which must not lose a command to a full pool).
    package func setBlocking(_ blocking: Bool) throws(ALSAError) {
        try check(snd_seq_nonblock(handle, blocking ? 0 : 1), "snd_seq_nonblock")
    }

    /// Waits until every event this client wrote has left the kernel's output pool, so a
    /// command-line tool can exit without cutting its last events.
    package func drainOutput() throws(ALSAError) {
        try check(snd_seq_drain_output(handle), "snd_seq_drain_output")
        try check(snd_seq_sync_output_queue(handle), "snd_seq_sync_output_queue")
    }

    /// Creates a port that receives the kernel's announcements of clients and ports coming and
    /// going, and subscribes it to the system announce port. Nobody else may connect to it.
    package func subscribeToAnnouncements() throws(ALSAError) -> UInt8 {
        let capabilities = UInt32(SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_NO_EXPORT)
        let port = try check(
            snd_seq_create_simple_port(
                handle, "announcements", capabilities, UInt32(SND_SEQ_PORT_TYPE_APPLICATION)),
            "snd_seq_create_simple_port")
        try connect(from: .systemAnnounce, to: UInt8(truncatingIfNeeded: port))
        // Releasing: pairs with the acquiring load in `announcementPort`.
        announcements.store(Int(port), ordering: .releasing)
        return UInt8(truncatingIfNeeded: port)
    }

    /// The port receiving announcements, once ``subscribeToAnnouncements()`` made it. Only we
    /// can write to it (no other client may subscribe, and it is hidden), so an event there
    /// from our own client is one we sent ourselves.
    package var announcementPort: UInt8? {
        // Acquiring: pairs with the releasing store in `subscribeToAnnouncements`.
        let port = announcements.load(ordering: .acquiring)
        return port < 0 ? nil : UInt8(truncatingIfNeeded: port)
    }

    /// Makes a `read` of the kernel descriptor wait for an event, or (`false`) gives the
    /// descriptor back its flags from before; whether reads now wait (never on a handle that
    /// is not `hw`). The flag is the descriptor's and so also covers writes, which is harmless
    /// for direct events (the kernel delivers those at once and never waits) but not for
    /// scheduled ones, which wait for room in the output pool: those go through
    /// ``withWritesNotWaiting(_:)``.
    @discardableResult
    package func setReadsWait(_ wait: Bool) -> Bool {
        let descriptor = kernelDescriptor
        return flagsBeforeWaiting.withLock { flagsBeforeWaiting in
            if wait, flagsBeforeWaiting == nil {
                let flags = fcntl(descriptor, F_GETFL)
                guard flags >= 0, fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) == 0 else { return false }
                flagsBeforeWaiting = flags
            } else if !wait, let flags = flagsBeforeWaiting {
                _ = fcntl(descriptor, F_SETFL, flags)
                flagsBeforeWaiting = nil
            }
            return flagsBeforeWaiting != nil
        }
    }

    /// Runs `write` with the descriptor non-blocking even while reads wait: a scheduled event
    /// meeting a full output pool then fails with `-EAGAIN` rather than stopping the thread.
    /// A read starting meanwhile answers `-EAGAIN`, which ``SequencerReader`` takes as a cue to
    /// wait in `poll` once. Scheduled events are rare (bundles with a future time tag), so the
    /// lock and the two `fcntl` calls are not on the path of a played note.
    package func withWritesNotWaiting<Value>(_ write: () throws(ALSAError) -> Value) throws(ALSAError) -> Value {
        try flagsBeforeWaiting.withLock { flagsBeforeWaiting throws(ALSAError) -> Value in
            guard let flags = flagsBeforeWaiting else { return try write() }
            _ = fcntl(kernelDescriptor, F_SETFL, flags | O_NONBLOCK)
            defer { _ = fcntl(kernelDescriptor, F_SETFL, flags & ~O_NONBLOCK) }
            return try write()
        }
    }
}
