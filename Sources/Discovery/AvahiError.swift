import CAvahi

/// An error from libavahi-client, with the call that failed.
package struct AvahiError: Error, Sendable, CustomStringConvertible {
    /// Avahi's error code (`AVAHI_ERR_*`, negative).
    var code: Int32
    var call: String

    /// Creates the error `code` of `call`.
    package init(code: Int32, call: String) {
        self.code = code
        self.call = call
    }

    package var description: String { "\(call): \(String(cString: avahi_strerror(code)))" }

    /// Whether the daemon is absent or went away (the client then waits for it to come back).
    package var isDaemonUnavailable: Bool {
        code == Int32(AVAHI_ERR_NO_DAEMON) || code == Int32(AVAHI_ERR_DISCONNECTED)
    }
}
