import MIDI

/// Operators, then destinations, then optional branches: the shape of a route.
///
/// An event runs through ``operators`` in order; if it survives, it goes to every index in
/// ``destinations`` and then on to the branches: to each of them (a fork), or by note range (a
/// key split). Output is `(event, destination index)` pairs handed to a non-escaping sink, so a
/// fork or key split can turn one input into several outputs without allocating.
///
/// **Notes are never lost.** A note-end (note-off, or note-on with velocity 0) does not run
/// through operators. Every chain remembers, per (channel, note) arriving at the route, which
/// (channel, note) it sent for the note-on, and the note-end is sent as exactly that note, to
/// that chain's destinations, in the chain's note-off form (see ``NoteOffStyle``), keeping its
/// release velocity, port and timestamp. A note-end whose note-on never got through is dropped
/// there. So a note-on moved out of range, filtered by velocity, or sent to one side of a key
/// split ends exactly where it went, even if the operators are replaced while it sounds. A
/// second note-on for a held (channel, note) that now goes out as a different note first ends
/// the one sent before. Poly pressure is not tracked: it runs through the operators.
///
/// A chain's note tables and its stateful operators keep their state in buffers that copies
/// share; a ``Route`` gives its chain fresh ones.
package struct Chain: Sendable {
    /// How a chain hands its survivors on after its destinations.
    package enum Branching: Sendable {
        /// No branches.
        case none
        /// Every branch gets a copy of every survivor.
        case fork([Chain])
        /// Note-ons and poly pressure go to every branch whose note range holds their note;
        /// note-ends go where their note-on went; everything else goes to every branch.
        case keySplit([KeyZone])
    }

    /// A key split's branch: the notes it takes and the chain they run through.
    package struct KeyZone: Sendable {
        var notes: ClosedRange<UInt8>
        var chain: Chain

        package init(_ notes: ClosedRange<UInt8>, _ chain: Chain) {
            self.notes = notes
            self.chain = chain
        }
    }

    /// The operators, in order; replace them with ``replaceOperators(_:atBranch:)``.
    package private(set) var operators: [Operator]
    /// The note-off form the chain's own operators set (the last normalisation wins), kept so
    /// that running an event does not search the operators for it.
    private var ownStyle: NoteOffStyle?
    /// Whether a throttle sits here or in a branch: only then can a value fall due later, and
    /// the pipeline asks for deadlines after every batch.
    package private(set) var hasThrottles = false
    /// The destination indices each survivor goes to.
    let destinations: [Int]
    /// The branches after the destinations.
    private(set) var branches: [Chain]
    /// Whether the branches are a key split (otherwise a fork).
    let splitsByKey: Bool
    /// The notes this chain takes when it is a key split's branch.
    private(set) var keyRange: ClosedRange<UInt8> = 0...127
    package let notes: NoteTable

    /// A chain running `operators`, sending survivors to `destinations`, then to `branching`.
    package init(_ operators: [Operator] = [], destinations: [Int] = [], then branching: Branching = .none) {
        self.operators = operators
        self.destinations = destinations
        ownStyle = Self.lastStyle(operators)
        notes = NoteTable()
        switch branching {
        case .none:
            branches = []
            splitsByKey = false
        case .fork(let chains):
            branches = chains
            splitsByKey = false
        case .keySplit(let zones):
            branches = zones.map { zone in
                var chain = zone.chain
                chain.keyRange = zone.notes
                return chain
            }
            splitsByKey = true
        }
        hasThrottles = Self.anyThrottle(operators, branches)
    }

    private init(copying chain: Chain) {
        operators = chain.operators.map { $0.withFreshState() }
        ownStyle = chain.ownStyle
        destinations = chain.destinations
        branches = chain.branches.map { $0.withFreshState() }
        splitsByKey = chain.splitsByKey
        keyRange = chain.keyRange
        notes = NoteTable()
        hasThrottles = chain.hasThrottles
    }

    /// The same chain with its own, empty note tables and operator state.
    package func withFreshState() -> Chain { Chain(copying: self) }

    /// Replaces the operators of the branch at `path` (branch indices from this chain down; empty
    /// for this chain), keeping its note table so held notes still end correctly. Returns `false`
    /// if there is no such branch.
    @discardableResult
    mutating func replaceOperators(_ operators: [Operator], atBranch path: [Int] = []) -> Bool {
        guard let first = path.first else {
            self.operators = operators
            ownStyle = Self.lastStyle(operators)
            hasThrottles = Self.anyThrottle(operators, branches)
            return true
        }
        guard branches.indices.contains(first) else { return false }
        let replaced = branches[first].replaceOperators(operators, atBranch: Array(path.dropFirst()))
        hasThrottles = Self.anyThrottle(self.operators, branches)
        return replaced
    }

    private static func anyThrottle(_ operators: [Operator], _ branches: [Chain]) -> Bool {
        let throttles = operators.contains { if case .throttle = $0 { true } else { false } }
        return throttles || branches.contains(where: \.hasThrottles)
    }

    /// The number of notes this chain and its branches hold (note-ons sent, not yet ended).
    package var heldNoteCount: Int {
        var total = notes.count
        var b = 0
        while b < branches.count {
            total += branches[b].heldNoteCount
            b += 1
        }
        return total
    }

    // MARK: Running

    /// Runs `event`, arriving at time `now` (ns), and hands each output to `sink`.
    package mutating func process(_ event: MIDIEvent, now: UInt64, into sink: (MIDIEvent, Int) -> Void) {
        var tally = RouteTally()
        process(event, now: now, tally: &tally, sink: sink)
    }

    /// Emits the throttled values due at `now`, each continuing through the operators after its
    /// throttle, the destinations and the branches.
    mutating func flushDue(now: UInt64, into sink: (MIDIEvent, Int) -> Void) {
        var tally = RouteTally()
        flushDue(now: now, inherited: nil, tally: &tally, sink: sink)
    }

    /// When the earliest throttled value here or in a branch falls due (ns), or `nil`.
    var nextDeadline: UInt64? {
        guard hasThrottles else { return nil }
        var earliest: UInt64? = nil
        var i = 0
        while i < operators.count {
            if let deadline = operators[i].nextDeadline { earliest = min(earliest ?? .max, deadline) }
            i += 1
        }
        var b = 0
        while b < branches.count {
            if let deadline = branches[b].nextDeadline { earliest = min(earliest ?? .max, deadline) }
            b += 1
        }
        return earliest
    }

    /// Sends a note-end for every note this chain and its branches hold, and forgets them.
    func releaseAll(into sink: (MIDIEvent, Int) -> Void) {
        releaseAll(inherited: nil, sink: sink)
    }

    /// The one way an event runs through a chain: a note-end goes where its note-on went, and
    /// everything else through the operators (none, for a route that only forwards) to the
    /// destinations and branches.
    @inline(__always)
    package mutating func process(
        _ event: MIDIEvent, now: UInt64, tally: inout RouteTally, sink: (MIDIEvent, Int) -> Void
    ) {
        let key = NoteTable.key(of: event)
        if event.endsNote {
            if endNote(event, key: key, inherited: nil, tally: &tally, sink: sink) { return }
            // A note-off for a note this chain never sent: it may have started before the
            // bridge did (a restart, or a kill and restart), so it goes through the operators
            // like any event rather than being dropped, and a synth is never left hanging.
            tally.unmatchedNoteOffs += 1
        }
        run(event, key: key, from: 0, now: now, inherited: nil, tally: &tally, sink: sink)
    }

    /// Records that the note-on `event` (velocity > 0) goes out for `key`; if the key still holds
    /// a different note sent earlier, that one is ended first, in `style`.
    @inline(__always)
    private func recordNoteOn(
        _ event: MIDIEvent, key: Int, style: NoteOffStyle?, tally: inout RouteTally, sink: (MIDIEvent, Int) -> Void
    ) {
        if let previous = notes.otherNote(for: key, than: event) {
            var end = event
            end.kind = .noteOff
            end.data2 = 0
            NoteTable.aim(&end, at: previous)
            if let style { _ = style.process(&end) }
            deliver(end, tally: &tally, sink: sink)
        }
        notes.record(key, channel: event.channel, note: event.data1, port: event.port)
    }

    /// Ends the note this chain sent for `key`, as the note-end `event` in `style`, and forgets
    /// it; false if the chain sent none.
    @inline(__always)
    private func endEmitted(
        _ event: MIDIEvent, key: Int, style: NoteOffStyle?, tally: inout RouteTally, sink: (MIDIEvent, Int) -> Void
    ) -> Bool {
        guard let emitted = notes.remove(key) else { return false }
        var end = event
        NoteTable.aim(&end, at: emitted)
        if let style { _ = style.process(&end) }
        deliver(end, tally: &tally, sink: sink)
        return true
    }

    /// Runs `event` through the operators from `start`, then delivers and branches.
    private mutating func run(
        _ input: MIDIEvent, key: Int, from start: Int, now: UInt64, inherited: NoteOffStyle?,
        tally: inout RouteTally, sink: (MIDIEvent, Int) -> Void
    ) {
        var event = input
        // Checked before any element is touched: a mutating access to an empty array, which
        // shares the empty singleton, would make it unique first, costing a copy per event.
        if start < operators.count {
            var i = start
            while i < operators.count {
                guard operators[i].process(&event, now: now) else {
                    tally.count(operators[i].dropReason)
                    return
                }
                i += 1
            }
        }
        if event.kind == .noteOn, event.data2 > 0, !destinations.isEmpty {
            // A held key now going out as a different note: the old one ends first.
            recordNoteOn(event, key: key, style: style(inherited), tally: &tally, sink: sink)
        }
        deliver(event, tally: &tally, sink: sink)
        guard !branches.isEmpty else { return }
        let style = style(inherited)
        // Note-offs reach here only when unmatched: they go where their note-on would have gone.
        let byNote = splitsByKey && (event.kind == .noteOn || event.kind == .polyPressure || event.kind == .noteOff)
        var b = 0
        while b < branches.count {
            if !byNote || branches[b].keyRange.contains(event.data1) {
                branches[b].run(event, key: key, from: 0, now: now, inherited: style, tally: &tally, sink: sink)
            }
            b += 1
        }
    }

    /// Ends the note this chain and its branches sent for `key`; `true` if any had sent one.
    private func endNote(
        _ event: MIDIEvent, key: Int, inherited: NoteOffStyle?, tally: inout RouteTally,
        sink: (MIDIEvent, Int) -> Void
    ) -> Bool {
        var released = endEmitted(event, key: key, style: style(inherited), tally: &tally, sink: sink)
        guard !branches.isEmpty else { return released }
        let style = style(inherited)
        var b = 0
        while b < branches.count {
            if branches[b].endNote(event, key: key, inherited: style, tally: &tally, sink: sink) { released = true }
            b += 1
        }
        return released
    }

    mutating func flushDue(
        now: UInt64, inherited: NoteOffStyle?, tally: inout RouteTally, sink: (MIDIEvent, Int) -> Void
    ) {
        var i = 0
        while i < operators.count {
            if case .throttle(let throttle) = operators[i] {
                let next = i + 1
                throttle.flushDue(now: now) { event in
                    tally.flushed += 1
                    run(event, key: 0, from: next, now: now, inherited: inherited, tally: &tally, sink: sink)
                }
            }
            i += 1
        }
        guard !branches.isEmpty else { return }
        let style = style(inherited)
        var b = 0
        while b < branches.count {
            branches[b].flushDue(now: now, inherited: style, tally: &tally, sink: sink)
            b += 1
        }
    }

    func releaseAll(inherited: NoteOffStyle?, sink: (MIDIEvent, Int) -> Void) {
        let style = style(inherited)
        notes.removeAll { _, emitted in
            let (channel, note, port) = NoteTable.unpack(emitted)
            var end = MIDIEvent.noteOff(channel: channel, note: note)
            end.port = port
            if let style { _ = style.process(&end) }
            var d = 0
            while d < destinations.count {
                sink(end, destinations[d])
                d += 1
            }
        }
        var b = 0
        while b < branches.count {
            branches[b].releaseAll(inherited: style, sink: sink)
            b += 1
        }
    }

    /// The note-off form of this chain: its last `normaliseNoteOffs` operator, else its parent's.
    private func style(_ inherited: NoteOffStyle?) -> NoteOffStyle? {
        ownStyle ?? inherited
    }

    private static func lastStyle(_ operators: [Operator]) -> NoteOffStyle? {
        operators.last { $0.noteOffStyle != nil }?.noteOffStyle
    }

    @inline(__always)
    private func deliver(_ event: MIDIEvent, tally: inout RouteTally, sink: (MIDIEvent, Int) -> Void) {
        var d = 0
        while d < destinations.count {
            sink(event, destinations[d])
            tally.deliveries += 1
            d += 1
        }
    }
}
