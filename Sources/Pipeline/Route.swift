import MIDI

/// A chain fed by a set of input ports, with its counters: what the input thread runs.
///
/// Built once from the configuration, then used by one thread at a time (the input thread).
/// It takes a fresh copy of its chain's state, so two routes built from one chain never share
/// note tables or operator state.
package final class Route: @unchecked Sendable {
    // @unchecked Sendable: built on one thread, then handed to the input thread, which alone
    // calls its methods; only `counters` (atomics) is read from elsewhere.

    /// The input ports whose events this route takes.
    let inputPorts: PortSet
    /// The chain; change its operators with ``replaceOperators(_:atBranch:)``.
    package private(set) var chain: Chain
    /// Counters, readable from any thread.
    package let counters = RouteCounters()

    /// A route running events from `inputPorts` through `chain` (with fresh state).
    package init(inputPorts: PortSet, chain: Chain) {
        self.inputPorts = inputPorts
        self.chain = chain.withFreshState()
    }

    /// Runs `event`, arriving at time `now` (monotonic ns), if it comes from one of the route's
    /// ports, handing each `(event, destination index)` output to `sink`: the one entry point
    /// of both directions. Returns whether the route took the event.
    @discardableResult
    package func process(_ event: MIDIEvent, now: UInt64, into sink: (MIDIEvent, Int) -> Void) -> Bool {
        guard inputPorts.contains(event.port) else { return false }
        var tally = RouteTally()
        chain.process(event, now: now, tally: &tally, sink: sink)
        counters.publish(tally, eventsIn: 1)
        return true
    }

    /// Emits the throttled values due at `now` (see ``Chain/flushDue(now:into:)``).
    package func flushDue(now: UInt64, into sink: (MIDIEvent, Int) -> Void) {
        var tally = RouteTally()
        chain.flushDue(now: now, inherited: nil, tally: &tally, sink: sink)
        counters.publish(tally, eventsIn: 0)
    }

    /// When to call ``flushDue(now:into:)`` next (ns), or `nil` when nothing is pending.
    package var nextDeadline: UInt64? {
        chain.hasThrottles ? chain.nextDeadline : nil
    }

    /// Sends a note-end for every note the route holds, and forgets them: for reload and
    /// shutdown.
    package func releaseAll(into sink: (MIDIEvent, Int) -> Void) {
        chain.releaseAll(into: sink)
    }

    /// The number of notes the route holds.
    package var heldNoteCount: Int { chain.heldNoteCount }

    /// Replaces the operators of the chain or of a branch (see
    /// ``Chain/replaceOperators(_:atBranch:)``), giving them fresh state; held notes still end
    /// as they were sent.
    @discardableResult
    package func replaceOperators(_ operators: [Operator], atBranch path: [Int] = []) -> Bool {
        chain.replaceOperators(operators.map { $0.withFreshState() }, atBranch: path)
    }
}
