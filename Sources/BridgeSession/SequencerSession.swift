import ALSASequencer
import Endpoints
import Platform

/// The bridge's one ALSA client, which both directions share: the client, its announcements
/// port, the bindings of all our ports (the inputs' sources and the outputs' destinations) and
/// the clock every event is stamped and scheduled by. The composition root makes it and hands it
/// to each direction; the directions do not know each other.
///
/// One client is one stream of events, so announcements (clients and ports coming and going)
/// arrive among the MIDI input and the input thread hands them to ``announced(_:)``, which
/// re-resolves every binding, the outputs' too.
package final class SequencerSession: @unchecked Sendable {
    // @unchecked Sendable: the client synchronises itself; the bindings are changed only by the
    // input thread, or by the owner while that thread is paused (see PortBindings).

    /// The ALSA client other programs see (`aconnect -l`).
    package let client: SequencerClient
    /// How each of our ports is bound by spec, re-resolved as ports come and go.
    package let bindings: PortBindings
    package let log: Logger
    private var subscribed = false
    /// Called with our output port whenever a binding connects it to a port (a device that came
    /// back, or appeared late), on the thread that reconciles: where an output's replay starts.
    package var outputConnected: (@Sendable (UInt8) -> Void)?

    /// Opens the client `name`, with the kernel's largest input pool: a reload stops reading for
    /// a few milliseconds, and a busy source must not lose events (note-offs among them) meanwhile.
    package init(name: String, log: Logger) throws(BridgeError) {
        do {
            client = try SequencerClient(name: name)
            try client.setInputPool(2000)
        } catch {
            throw .alsa(error)
        }
        bindings = PortBindings(client: client)
        self.log = log
    }

    /// Subscribes the announcements port, the first time only: after the first input ports, so
    /// that they are ports 0, 1, ... as a user would expect of the port numbers some schemes send
    /// (osmid's id, TouchOSC's port byte).
    package func subscribeToAnnouncements() throws(ALSAError) {
        guard !subscribed else { return }
        _ = try client.subscribeToAnnouncements()
        subscribed = true
    }

    /// An announcement the input thread read: re-resolves the bindings if it may change them.
    package func announced(_ announcement: Announcement) {
        if PortBindings.affectsBindings(announcement) { reconcile() }
    }

    /// Re-resolves every binding, of both directions, and logs what changed (the input thread,
    /// or the owner while it is paused).
    func reconcile() {
        for change in bindings.reconcile() {
            switch change.kind {
            case .connected:
                log.info(change.logLine)
                if change.direction == .destination { outputConnected?(change.ourPort) }
            case .lost: log.notice(change.logLine)
            case .failed: log.warning(change.logLine)
            }
        }
    }

    /// Reconciles, then tells which bindings of `direction` found no port yet: after a direction
    /// made or changed its ports.
    package func settle(_ direction: PortSpec.Direction) {
        reconcile()
        let label = direction == .source ? "input" : "output"
        for binding in bindings.bindings where binding.direction == direction && binding.connected.isEmpty {
            log.notice("\(label): '\(binding.spec)' is waiting: \(binding.waitingReason ?? "no port yet")")
        }
    }
}
