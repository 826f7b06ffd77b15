import OSC

/// Where the namespace's live values come from: what `?VALUE` answers and what the WebSocket
/// sends to a client that LISTENs. The bridge implements it over its last-value stores; the
/// server calls it on its own thread only, never on an event thread's.
package protocol OSCQueryValueSource: AnyObject, Sendable {
    /// The current value of the method at `path`, one argument per type tag, or `nil` when the
    /// method has none yet (or is not one whose value is kept).
    func value(at path: String) -> [OSCArgument]?

    /// Whether the method at `path` has a value that can be read (ACCESS 3 rather than 2), even
    /// before any arrived.
    func isReadable(_ path: String) -> Bool

    /// Calls `body` with the path of every method whose value changed since the last call, and
    /// forgets them. One caller: the server's thread.
    func takeChanges(_ body: (String) -> Void)
}
