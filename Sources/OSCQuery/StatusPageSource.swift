/// What the status page served beside the OSCQuery namespace shows and does (docs/CONFIG.md,
/// "Status page"): the bridge implements it; the server calls it on its own thread only, never
/// on an event thread's.
package protocol StatusPageSource: AnyObject, Sendable {
    /// The bridge's state as a JSON object's text: `aseqosc status --json` and the page's own
    /// fields (the config file, the routes in words).
    func statusJSON() -> String

    /// Turns the event monitor on (a page is watching) or off; while off, the event threads pay
    /// one relaxed load per event for it.
    func setMonitoring(_ on: Bool)

    /// Calls `body` with one line per event seen since the last call (`in keys: note on 1 60
    /// 100`), oldest first, and when the bridge read what the line is about (the MIDI event, or
    /// the OSC message that made it; CLOCK_MONOTONIC nanoseconds, 0 when unknown); returns how
    /// many were dropped meanwhile (the monitor's rings were full: a burst is sampled, never
    /// slowed).
    func takeMonitorLines(_ body: (_ line: String, _ read: UInt64) -> Void) -> UInt64

    /// Does `action` (one of ``StatusPageAction``) and says how it went, in a line.
    func perform(_ action: StatusPageAction) -> Result<String, StatusPageRefusal>
}

/// What the page can ask for, when the config allows it (`osc.query.actions`).
package enum StatusPageAction: String, Sendable, CaseIterable {
    /// Read the config file again, as SIGHUP does.
    case reload
    /// End every note: each output port is sent All Notes Off and the routes' held notes their
    /// note-offs.
    case panic
    /// Send every destination and output with `sync` its last values again.
    case sync
}

/// Why an action did not happen.
package struct StatusPageRefusal: Error, Sendable, Equatable {
    package var reason: String

    /// A refusal for `reason`.
    package init(_ reason: String) { self.reason = reason }
}
