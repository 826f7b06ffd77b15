import MIDI
import Storage

/// A chain fed by a set of input ports, with its counters: what the pipeline thread runs.
///
/// Built once from the configuration, then used by one thread at a time (the pipeline thread).
/// It takes a fresh copy of its chain's state, so two routes built from one chain never share
/// note tables or operator state.
public final class Route: @unchecked Sendable {
    // @unchecked Sendable: built on one thread, then handed to the pipeline thread, which alone
    // calls its methods; only `counters` (atomics) is read from elsewhere.

    /// The input ports whose events this route takes.
    public let inputPorts: PortSet
    /// The chain; change its operators with ``replaceOperators(_:atBranch:)``.
    public var chain: Chain { storage.value }
    /// Plain memory rather than a stored `var`, so that running an event pays no dynamic
    /// exclusivity check: only the pipeline thread touches it.
    @usableFromInline let storage: UncheckedCell<Chain>
    /// Counters, readable from any thread.
    public let counters = RouteCounters()
    /// What ``forward(_:)`` counted since ``publishForwarded()`` last ran, in plain memory.
    @usableFromInline let forwarded = UncheckedCell((events: 0, unmatchedNoteOffs: 0))

    /// A route running events from `inputPorts` through `chain` (with fresh state).
    public init(inputPorts: PortSet, chain: Chain) {
        self.inputPorts = inputPorts
        storage = UncheckedCell(chain.withFreshState())
    }

    /// Runs `event`, arriving at time `now` (monotonic ns), if it comes from one of the route's
    /// ports, handing each `(event, destination index)` output to `sink`. Returns whether the
    /// route took the event.
    @discardableResult
    public func process(_ event: MIDIEvent, now: UInt64, into sink: (MIDIEvent, Int) -> Void) -> Bool {
        guard inputPorts.contains(event.port) else { return false }
        var tally = RouteTally()
        storage.value.process(event, now: now, tally: &tally, sink: sink)
        counters.publish(tally, eventsIn: 1)
        return true
    }

    /// What ``forward(_:)`` decided for an event.
    public enum Forwarding: UInt8 {
        /// The event does not come from one of the route's ports.
        case notTaken
        /// Send the event, as `forward` left it, to each of ``forwardingDestinations``.
        case send
        /// Run the event through ``process(_:now:into:)`` instead (nothing was changed).
        case needsProcess
    }

    /// The destination indices of a route whose chain only has destinations (no operators, no
    /// branches), which ``forward(_:)`` serves; `nil` for any other route.
    public var forwardingDestinations: [Int]? {
        storage.value.onlyForwards ? storage.value.destinations : nil
    }

    /// For a route with ``forwardingDestinations``: what ``process(_:now:into:)`` does, without a
    /// sink to call per output (the commonest route, run for every event): `event` becomes what
    /// goes to each destination, and is left as it came unless the answer is `.send`. Its counts
    /// reach ``counters`` at the next ``publishForwarded()``.
    @inline(__always)
    public func forward(_ event: inout MIDIEvent) -> Forwarding {
        guard inputPorts.contains(event.port) else { return .notTaken }
        guard storage.value.onlyForwards,
            storage.value.forward(&event, unmatchedNoteOffs: &forwarded.value.unmatchedNoteOffs)
        else { return .needsProcess }
        forwarded.value.events &+= 1
        return .send
    }

    /// Adds what ``forward(_:)`` counted to ``counters``: once per batch, not per event.
    // Inlinable, like `nextDeadline`: both run after every receive, so they are inlined into
    // the pipeline's loop rather than called across the module boundary.
    @inlinable
    public func publishForwarded() {
        guard forwarded.value.events != 0 else { return }
        publishForwardedCounts()
    }

    @usableFromInline
    func publishForwardedCounts() {
        counters.publishForwarded(forwarded.value.events, unmatchedNoteOffs: forwarded.value.unmatchedNoteOffs)
        forwarded.value = (0, 0)
    }

    /// Emits the throttled values due at `now` (see ``Chain/flushDue(now:into:)``).
    public func flushDue(now: UInt64, into sink: (MIDIEvent, Int) -> Void) {
        var tally = RouteTally()
        storage.value.flushDue(now: now, inherited: nil, tally: &tally, sink: sink)
        counters.publish(tally, eventsIn: 0)
    }

    /// When to call ``flushDue(now:into:)`` next (ns), or `nil` when nothing is pending.
    @inlinable
    public var nextDeadline: UInt64? {
        // Read in place: going through `chain` would copy the chain (and retain its arrays).
        storage.value.hasThrottles ? storage.value.nextDeadline : nil
    }

    /// Sends a note-end for every note the route holds, and forgets them: for reload and
    /// shutdown.
    public func releaseAll(into sink: (MIDIEvent, Int) -> Void) {
        storage.value.releaseAll(into: sink)
    }

    /// The number of notes the route holds.
    public var heldNoteCount: Int { storage.value.heldNoteCount }

    /// Replaces the operators of the chain or of a branch (see
    /// ``Chain/replaceOperators(_:atBranch:)``), giving them fresh state; held notes still end
    /// as they were sent.
    @discardableResult
    public func replaceOperators(_ operators: [Operator], atBranch path: [Int] = []) -> Bool {
        storage.value.replaceOperators(operators.map { $0.withFreshState() }, atBranch: path)
    }
}
