import CWebSockets
import Endpoints
import Glibc
import JSON
import OSC
import OSCQuery
import OSCTransport
import Platform
import Synchronization

/// Why the OSCQuery server did not start.
package struct OSCQueryServerError: Error, Equatable, CustomStringConvertible {
    package var description: String
}

/// The OSCQuery namespace over HTTP and WebSocket on one port (libwebsockets, on a thread of
/// its own, never a real-time one).
///
/// HTTP: `GET /path`, `?HOST_INFO` and attribute queries, answered from an
/// ``OSCQueryNamespace`` a reload can swap, with live values from an ``OSCQueryValueSource``
/// when one is given (ACCESS 3 and VALUE for the methods it keeps; the whole tree, `GET /`, is
/// kept once written and carries no VALUE, which the proposal leaves optional).
///
/// WebSocket (an upgrade on any path): a text frame `{"COMMAND":"LISTEN","DATA":"/path"}`
/// makes the server send that method's value as a binary OSC message each time it changes
/// (the latest value every ``Limits/listenMilliseconds`` at most, so a fader moving fast costs
/// a frame per period, not per event), IGNORE stops it; a reload or hotplug that changes the
/// methods sends PATH_REMOVED and PATH_ADDED (one PATH_CHANGED past
/// ``OSCQueryPathChange/limit``).
///
/// Whatever a client does costs only it: addresses outside the allow-list are refused as they
/// connect, so are connections past ``Limits/connections`` (``Limits/connectionsPerAddress``
/// from one address); a request line and headers larger than ``Limits/requestBytes`` are
/// refused by the library; an HTTP connection silent for ``Limits/idleSeconds`` is closed; a
/// WebSocket client whose unsent frames pass ``Limits/queuedBytes`` (it does not read), that
/// sends a text frame longer than ``OSCQueryCommand/textLimit`` or more listens than
/// ``Limits/listensPerClient`` is closed. Every outcome is counted. Nothing here touches the
/// bridge's threads: values are read from the source on this server's thread.
package final class OSCQueryServer: @unchecked Sendable {
    // @unchecked Sendable: `context` and `thread` are set once; the one call other threads
    // make on the context, aseqosc_ws_wake, is the library's thread-safe one.
    /// What bounds the clients.
    package struct Limits: Sendable, Equatable {
        package var connections: UInt32 = 64
        package var connectionsPerAddress: UInt32 = 16
        package var idleSeconds: UInt32 = 5
        /// The memory one request may use: its request line and headers.
        var requestBytes = 16_384
        /// Frames a WebSocket client has not taken yet, in bytes, before it is closed.
        package var queuedBytes = 262_144
        /// Methods one WebSocket client may LISTEN to at once.
        var listensPerClient = 16_384
        /// How often changed values are sent to listeners.
        var listenMilliseconds = 10

        /// The defaults.
        package init() {}
    }

    /// What the server has done since it started.
    package struct Counters: Sendable, Equatable {
        /// Requests answered, by HTTP status.
        package var answered: [Int: UInt64] = [:]
        /// Connections taken.
        package var connections: UInt64 = 0
        /// Connections closed before any request on them was answered by the namespace: silent
        /// until the idle limit, a request too large, or not HTTP (the library answers those).
        package var closedUnanswered: UInt64 = 0
        /// Connections from addresses outside the allow-list, reset at once.
        package var refusedNotAllowed: UInt64 = 0
        /// Connections past ``Limits/connections`` or ``Limits/connectionsPerAddress``, reset at once.
        package var refusedOverLimit: UInt64 = 0
        /// Connections open now.
        package var open: UInt64 = 0
        /// WebSocket connections taken, and open now.
        package var webSockets: UInt64 = 0
        package var webSocketsOpen: UInt64 = 0
        /// Methods listened to now, over every client.
        package var listening: UInt64 = 0
        /// Frames sent: values (binary OSC) and namespace changes (text).
        package var valuesSent: UInt64 = 0
        package var pathChangesSent: UInt64 = 0
        /// Text frames that were not a LISTEN or IGNORE of a method, and binary frames (this
        /// server takes OSC on its OSC input, not over the WebSocket): ignored.
        package var framesIgnored: UInt64 = 0
        /// WebSocket clients closed for not reading (their queue full), for a text frame too
        /// long, or for listening to more than the limit.
        package var closedSlow: UInt64 = 0
        package var closedOversized: UInt64 = 0
        package var closedTooManyListens: UInt64 = 0
        /// The status page: times served, actions done, actions refused (asked by GET, from a
        /// network outside `actionsAllow`, from another site's page), pages watching now.
        package var pagesServed: UInt64 = 0
        package var actionsDone: UInt64 = 0
        package var actionsRefusedGet: UInt64 = 0
        package var actionsRefusedNotAllowed: UInt64 = 0
        package var actionsRefusedOtherSite: UInt64 = 0
        package var pagesWatching: UInt64 = 0
        /// Of those, the pages whose monitor runs (not paused): while none does, the event
        /// threads copy nothing.
        package var pagesMonitoring: UInt64 = 0
    }

    /// The status page served at `/` to browsers, and what it may do.
    package struct Page: Sendable {
        var source: any StatusPageSource
        /// The actions it offers (none unless the config lists them).
        var actions: Set<StatusPageAction>
        /// Whom actions are taken from.
        var actionsAllow: [IPNetwork]

        /// A page reading and acting through `source`.
        package init(source: any StatusPageSource, actions: Set<StatusPageAction>, actionsAllow: [IPNetwork]) {
            self.source = source
            self.actions = actions
            self.actionsAllow = actionsAllow
        }
    }

    private let handler: ConnectionHandler
    private let context: OpaquePointer
    private var thread: SystemThread?
    /// The port it listens on (the one chosen when the config said 0).
    package let port: UInt16
    /// `http://HOST:PORT`; the WebSocket is `ws://HOST:PORT`.
    package let url: String

    /// Listens on `host` (numeric) and `port` (0: any free one), answering only addresses in
    /// `allow` (empty: everyone, for an input on loopback).
    package init(
        host: String, port: UInt16, allow: [IPNetwork], namespace: OSCQueryNamespace, hostInfo: OSCQueryHostInfo,
        limits: Limits = Limits(), values: (any OSCQueryValueSource)? = nil, page: Page? = nil
    ) throws(OSCQueryServerError) {
        guard let address = IPAddress(parsing: host) else {
            throw OSCQueryServerError(description: "'\(host)' is not a numeric address")
        }
        let isIPv6: Bool
        if case .v6 = address { isIPv6 = true } else { isIPv6 = false }
        let endpoint = isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
        // The port is tried here first, so a refusal says why: libwebsockets logs a failed bind
        // and returns no context, with no `Errno` to tell a port in use from anything else.
        if port != 0 {
            do {
                let (socket, _) = try ListeningSocket.open(
                    host: host, port: Int(port), type: Int32(SOCK_STREAM.rawValue))
                close(socket)
            } catch {
                throw OSCQueryServerError(
                    description: "cannot listen on \(error.endpoint) for OSCQuery: \(error.reason)")
            }
        }
        handler = ConnectionHandler(
            namespace: namespace, hostInfo: hostInfo, allow: allow.isEmpty ? nil : IPAllowList(allow), values: values,
            limits: limits, page: page)
        var wsLimits = aseqosc_ws_limits(
            connections: limits.connections, idle_seconds: limits.idleSeconds,
            request_bytes: UInt32(limits.requestBytes),
            ping_seconds: 20, hangup_seconds: 30)
        // The shim reports a missing library only as `Errno.current`.
        Errno.current = Errno(0)
        guard
            let context = aseqosc_ws_start(
                host, Int32(port), isIPv6 ? 1 : 0, &wsLimits, ConnectionHandler.callback, ConnectionHandler.tick,
                Unmanaged.passUnretained(handler).toOpaque())
        else {
            if Errno.current == Errno(ELIBACC) {
                let library = String(cString: aseqosc_ws_library())
                throw OSCQueryServerError(
                    description: "\(library) cannot be loaded (apt-get install \(String(cString: aseqosc_ws_package)))")
            }
            throw OSCQueryServerError(
                description: "cannot listen on \(endpoint) for OSCQuery: libwebsockets refused to start")
        }
        self.context = context
        handler.context = context
        self.port = UInt16(truncatingIfNeeded: aseqosc_ws_port(context))
        url = isIPv6 ? "http://[\(host)]:\(self.port)" : "http://\(host):\(self.port)"
        nonisolated(unsafe) let running = context
        let handler = handler
        thread = SystemThread(name: "oscquery") {
            while !handler.stopping.load(ordering: .acquiring) { _ = aseqosc_ws_service(running) }
        }
    }

    deinit {
        handler.stopping.store(true, ordering: .releasing)
        aseqosc_ws_wake(context)
        thread?.join()
        // An action's thread may still want to wake it: from now on it does not.
        handler.destroyed.withLock { $0 = true }
        // Closes every connection; no callback runs after this.
        aseqosc_ws_destroy(context)
        handler.stopMonitoring()
    }

    /// Answers from `namespace` and `hostInfo` from now on (after a reload), and tells the
    /// WebSocket clients which methods came and went.
    package func update(namespace: OSCQueryNamespace, hostInfo: OSCQueryHostInfo) {
        handler.content.withLock {
            $0 = ConnectionHandler.Content(namespace, hostInfo, version: $0.version + 1)
        }
        handler.wake()
    }

    /// The counts so far.
    package var counters: Counters { handler.counters.withLock { $0 } }
}
