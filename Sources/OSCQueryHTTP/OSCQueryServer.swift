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
public struct OSCQueryServerError: Error, Equatable, CustomStringConvertible {
    public var description: String
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
public final class OSCQueryServer: @unchecked Sendable {
    // @unchecked Sendable: `context` and `thread` are set once; the one call other threads
    // make on the context, aseqosc_ws_wake, is the library's thread-safe one.
    /// What bounds the clients.
    public struct Limits: Sendable, Equatable {
        public var connections: UInt32 = 64
        public var connectionsPerAddress: UInt32 = 16
        public var idleSeconds: UInt32 = 5
        /// The memory one request may use: its request line and headers.
        public var requestBytes = 16_384
        /// Frames a WebSocket client has not taken yet, in bytes, before it is closed.
        public var queuedBytes = 262_144
        /// Methods one WebSocket client may LISTEN to at once.
        public var listensPerClient = 16_384
        /// How often changed values are sent to listeners.
        public var listenMilliseconds = 10

        /// The defaults.
        public init() {}
    }

    /// What the server has done since it started.
    public struct Counters: Sendable, Equatable {
        /// Requests answered, by HTTP status.
        public var answered: [Int: UInt64] = [:]
        /// Connections taken.
        public var connections: UInt64 = 0
        /// Connections closed before any request on them was answered by the namespace: silent
        /// until the idle limit, a request too large, or not HTTP (the library answers those).
        public var closedUnanswered: UInt64 = 0
        /// Connections from addresses outside the allow-list, reset at once.
        public var refusedNotAllowed: UInt64 = 0
        /// Connections past ``Limits/connections`` or ``Limits/connectionsPerAddress``, reset at once.
        public var refusedOverLimit: UInt64 = 0
        /// Connections open now.
        public var open: UInt64 = 0
        /// WebSocket connections taken, and open now.
        public var webSockets: UInt64 = 0
        public var webSocketsOpen: UInt64 = 0
        /// Methods listened to now, over every client.
        public var listening: UInt64 = 0
        /// Frames sent: values (binary OSC) and namespace changes (text).
        public var valuesSent: UInt64 = 0
        public var pathChangesSent: UInt64 = 0
        /// Text frames that were not a LISTEN or IGNORE of a method, and binary frames (this
        /// server takes OSC on its OSC input, not over the WebSocket): ignored.
        public var framesIgnored: UInt64 = 0
        /// WebSocket clients closed for not reading (their queue full), for a text frame too
        /// long, or for listening to more than the limit.
        public var closedSlow: UInt64 = 0
        public var closedOversized: UInt64 = 0
        public var closedTooManyListens: UInt64 = 0
        /// The status page: times served, actions done, actions refused (asked by GET, from a
        /// network outside `actionsAllow`, from another site's page), pages watching now.
        public var pagesServed: UInt64 = 0
        public var actionsDone: UInt64 = 0
        public var actionsRefusedGet: UInt64 = 0
        public var actionsRefusedNotAllowed: UInt64 = 0
        public var actionsRefusedOtherSite: UInt64 = 0
        public var pagesWatching: UInt64 = 0
    }

    /// The status page served at `/` to browsers, and what it may do.
    public struct Page: Sendable {
        public var source: any StatusPageSource
        /// The actions it offers (none unless the config lists them).
        public var actions: Set<StatusPageAction>
        /// Whom actions are taken from.
        public var actionsAllow: [IPNetwork]

        /// A page reading and acting through `source`.
        public init(source: any StatusPageSource, actions: Set<StatusPageAction>, actionsAllow: [IPNetwork]) {
            self.source = source
            self.actions = actions
            self.actionsAllow = actionsAllow
        }
    }

    private let handler: ConnectionHandler
    private let context: OpaquePointer
    private var thread: SystemThread?
    /// The port it listens on (the one chosen when the config said 0).
    public let port: UInt16
    /// `http://HOST:PORT`; the WebSocket is `ws://HOST:PORT`.
    public let url: String

    /// Listens on `host` (numeric) and `port` (0: any free one), answering only addresses in
    /// `allow` (empty: everyone, for an input on loopback).
    public init(
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
        // and returns no context, with no errno to tell a port in use from anything else.
        if port != 0 {
            do {
                let (socket, _) = try ListeningSocket.open(
                    host: host, port: Int(port), type: Int32(SOCK_STREAM.rawValue))
                close(socket)
            } catch {
                let reason = String(cString: strerror(error.code))
                throw OSCQueryServerError(description: "cannot listen on \(error.endpoint) for OSCQuery: \(reason)")
            }
        }
        handler = ConnectionHandler(
            namespace: namespace, hostInfo: hostInfo, allow: allow.isEmpty ? nil : IPAllowList(allow), values: values,
            limits: limits, page: page)
        var wsLimits = aseqosc_ws_limits(
            connections: limits.connections, idle_seconds: limits.idleSeconds,
            request_bytes: UInt32(limits.requestBytes),
            ping_seconds: 20, hangup_seconds: 30)
        errno = 0
        guard
            let context = aseqosc_ws_start(
                host, Int32(port), isIPv6 ? 1 : 0, &wsLimits, ConnectionHandler.callback, ConnectionHandler.tick,
                Unmanaged.passUnretained(handler).toOpaque())
        else {
            if errno == ELIBACC {
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
    public func update(namespace: OSCQueryNamespace, hostInfo: OSCQueryHostInfo) {
        handler.content.withLock {
            $0 = ConnectionHandler.Content(namespace, hostInfo, version: $0.version + 1)
        }
        handler.wake()
    }

    /// The counts so far.
    public var counters: Counters { handler.counters.withLock { $0 } }
}

/// The library's callbacks and the connections' state, apart from the server so it exists
/// before the context that calls into it. Everything but `content`, `counters` and `stopping`
/// is touched on the server's thread only.
private final class ConnectionHandler: @unchecked Sendable {
    /// What the server answers from.
    struct Content {
        var namespace: OSCQueryNamespace
        var hostInfo: OSCQueryHostInfo
        /// Once asked for, the answer to `GET /`: the whole tree, which a large layout takes
        /// long to write (16 outputs: 570 KB) and clients fetch again and again.
        var root: OSCQueryAnswer? = nil
        /// Counts the updates, so that a root written from an older namespace is not kept.
        var version: Int

        init(_ namespace: OSCQueryNamespace, _ hostInfo: OSCQueryHostInfo, version: Int) {
            self.namespace = namespace
            self.hostInfo = hostInfo
            self.version = version
        }
    }

    /// One connection: an HTTP answer being written, or a WebSocket client's listens and frames.
    final class Session {
        let address: IPAddress
        var answered = false
        /// The HTTP body left to write.
        var body: [UInt8] = []
        var bodyOffset = 0
        /// Closed once answered: a request with a method this server refuses may have a body
        /// the library would otherwise wait for.
        var closeAfterAnswer = false
        var isHead = false
        /// An action's answer, once it is done.
        var pendingResponse: Response? = nil
        /// A status page watching: it is sent the status as it changes, and the events.
        var wantsStatus = false
        var wantsMonitor = false
        var isWebSocket = false
        var listens: Set<String> = []
        /// Frames to send, each with `aseqosc_lws_pre` bytes the library writes its header in.
        var frames: [(bytes: [UInt8], binary: Bool)] = []
        var framesStart = 0
        var queuedBytes = 0
        /// A text message arriving in fragments.
        var text: [UInt8] = []
        /// Why it is being closed, once it is: the close frame's status.
        var closing: lws_close_status? = nil

        init(address: IPAddress) { self.address = address }
    }

    let content: Mutex<Content>
    let counters = Mutex(OSCQueryServer.Counters())
    let stopping = Atomic<Bool>(false)
    private let allow: IPAllowList?
    private let values: (any OSCQueryValueSource)?
    private let limits: OSCQueryServer.Limits

    /// The status page, with its allow-list for actions.
    private let page: (source: any StatusPageSource, actions: Set<StatusPageAction>, actionsAllow: IPAllowList)?
    /// Actions done on their threads, waiting to be answered on this one.
    let finishedActions = Mutex<[(UInt, StatusPageAction, Result<String, StatusPageRefusal>)]>([])
    /// Set once the context is destroyed: nothing may wake it then.
    let destroyed = Mutex(false)
    /// Ticks since the last status sent, and the last status text sent.
    private var ticksSinceStatus = 0
    /// Ticks since the events were last sent (every 50 ms).
    private var ticksSinceEvents = 0
    private var lastStatus = ""
    private var monitoring = false

    private var sessions: [UInt: Session] = [:]
    /// The address of each socket accepted but not yet given a connection.
    private var accepted: [Int32: IPAddress] = [:]
    /// The clients listening to each method.
    private var listeners: [String: Set<UInt>] = [:]
    /// The methods WebSocket clients were last told about, and the version they came from.
    private var methods: Set<String>
    private var methodsVersion = 0
    private var tickScheduled = false
    /// The library's context, set before its thread starts.
    var context: OpaquePointer?

    init(
        namespace: OSCQueryNamespace, hostInfo: OSCQueryHostInfo, allow: IPAllowList?,
        values: (any OSCQueryValueSource)?, limits: OSCQueryServer.Limits, page: OSCQueryServer.Page?
    ) {
        self.page = page.map { ($0.source, $0.actions, IPAllowList($0.actionsAllow)) }
        content = Mutex(Content(namespace, hostInfo, version: 0))
        methods = namespace.root.methodPaths
        self.allow = allow
        self.values = values
        self.limits = limits
    }

    /// Ends the context's wait, from any thread, unless it is gone.
    func wake() {
        destroyed.withLock { if !$0, let context { aseqosc_ws_wake(context) } }
    }

    func stopMonitoring() {
        if monitoring { page?.source.setMonitoring(false) }
        monitoring = false
    }

    private static func from(_ user: UnsafeMutableRawPointer?) -> ConnectionHandler {
        Unmanaged<ConnectionHandler>.fromOpaque(user!).takeUnretainedValue()
    }

    static let tick: aseqosc_ws_tick = { user in from(user).sendChangedValues() }

    static let callback: aseqosc_ws_callback = { user, wsi, reason, session, input, length in
        let handler = from(user)
        switch reason {
        case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
            return handler.admit(session!) ? 0 : -1
        case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
            if let wsi { handler.created(wsi) }
        case LWS_CALLBACK_WSI_DESTROY:
            if let wsi { handler.destroyed(wsi) }
        case LWS_CALLBACK_HTTP:
            guard let wsi else { return -1 }
            let path = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "/"
            return handler.request(wsi, path: path)
        case LWS_CALLBACK_HTTP_WRITEABLE:
            guard let wsi else { return -1 }
            return handler.writeBody(wsi)
        case LWS_CALLBACK_ESTABLISHED:
            if let wsi { handler.established(wsi) }
        case LWS_CALLBACK_RECEIVE:
            guard let wsi else { return -1 }
            return handler.received(wsi, UnsafeRawBufferPointer(start: input, count: length))
        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let wsi else { return -1 }
            return handler.writeFrame(wsi)
        case LWS_CALLBACK_CLOSED:
            if let wsi { handler.closed(wsi) }
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            handler.tellNamespaceChanges()
            handler.answerFinishedActions()
        default:
            break
        }
        return 0
    }

    // MARK: Connections

    /// Whether a socket just accepted may stay: allowed, and under the limits.
    private func admit(_ arguments: UnsafeMutableRawPointer) -> Bool {
        guard let address = IPAddress(aseqosc_ws_filter_address(arguments)) else { return false }
        if let allow, !allow.allows(address) {
            counters.withLock { $0.refusedNotAllowed += 1 }
            return false
        }
        let fromThere = sessions.values.count { $0.address == address } + accepted.values.count { $0 == address }
        guard sessions.count + accepted.count < limits.connections, fromThere < limits.connectionsPerAddress else {
            counters.withLock { $0.refusedOverLimit += 1 }
            return false
        }
        accepted[aseqosc_ws_filter_socket(arguments)] = address
        return true
    }

    private func created(_ wsi: OpaquePointer) {
        // Only accepted sockets were admitted; the listening one has no peer.
        guard let address = accepted.removeValue(forKey: lws_get_socket_fd(wsi)) else { return }
        sessions[UInt(bitPattern: wsi)] = Session(address: address)
        counters.withLock {
            $0.connections += 1
            $0.open += 1
        }
    }

    private func destroyed(_ wsi: OpaquePointer) {
        guard let session = sessions.removeValue(forKey: UInt(bitPattern: wsi)) else { return }
        counters.withLock {
            $0.open -= 1
            if !session.answered && !session.isWebSocket { $0.closedUnanswered += 1 }
        }
    }

    // MARK: HTTP

    /// An HTTP response as it goes out.
    struct Response {
        var status: Int
        var type: String?
        var body: [UInt8]
        var allow: String? = nil

        init(status: Int, type: String?, body: String, allow: String? = nil) {
            self.status = status
            self.type = status == 204 ? nil : type
            self.body = status == 204 ? [] : Array(body.utf8)
            self.allow = allow
        }

        init(_ answer: OSCQueryAnswer) {
            self.init(
                status: answer.status, type: answer.isJSON ? "application/json" : "text/plain; charset=utf-8",
                body: answer.body)
        }

        static func text(_ status: Int, _ text: String, allow: String? = nil) -> Response {
            Response(status: status, type: "text/plain; charset=utf-8", body: text + "\n", allow: allow)
        }
    }

    private func request(_ wsi: OpaquePointer, path: String) -> Int32 {
        guard let session = sessions[UInt(bitPattern: wsi)] else { return -1 }
        let isGet = lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0
        let isHead = !isGet && lws_hdr_total_length(wsi, WSI_TOKEN_HEAD_URI) > 0
        let isPost = !isGet && !isHead && lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0
        session.answered = true
        session.closeAfterAnswer = !(isGet || isHead)
        session.isHead = isHead
        let response: Response
        if let page, path.hasPrefix(Self.actionPrefix) {
            guard let action = StatusPageAction(rawValue: String(path.dropFirst(Self.actionPrefix.count))),
                page.actions.contains(action)
            else {
                return respond(wsi, .text(404, "no such action, or not enabled (osc.query.actions)"))
            }
            guard isPost else {
                counters.withLock { $0.actionsRefusedGet += 1 }
                return respond(wsi, .text(405, "refused: actions are taken by POST only", allow: "POST"))
            }
            guard page.actionsAllow.allows(session.address) else {
                counters.withLock { $0.actionsRefusedNotAllowed += 1 }
                return respond(
                    wsi, .text(403, "refused: \(session.address) is not in osc.query.actionsAllow"))
            }
            // A page of another site may POST here from a browser on an allowed network: the
            // browser says where the page came from, and it must be this server.
            if let origin = header(wsi, WSI_TOKEN_ORIGIN), origin != "http://" + (header(wsi, WSI_TOKEN_HOST) ?? "") {
                counters.withLock { $0.actionsRefusedOtherSite += 1 }
                return respond(wsi, .text(403, "refused: the request came from another site's page (\(origin))"))
            }
            start(action, for: UInt(bitPattern: wsi), page: page.source)
            return 0
        } else if isGet || isHead {
            let attributes = queryKeys(wsi)
            if page != nil, path == "/", attributes.isEmpty,
                header(wsi, WSI_TOKEN_HTTP_ACCEPT)?.contains("text/html") == true
            {
                counters.withLock { $0.pagesServed += 1 }
                response = Response(status: 200, type: "text/html; charset=utf-8", body: StatusPageDocument.html)
            } else {
                response = Response(answer(path: path, attributes: attributes))
            }
        } else {
            response = .text(405, "only GET and HEAD", allow: "GET, HEAD")
        }
        return respond(wsi, response)
    }

    /// Where the page's actions are POSTed: `/aseqosc/action/reload` and the others.
    static let actionPrefix = "/aseqosc/action/"

    /// Writes `response`'s head now and its body as the connection takes it; counted by status.
    private func respond(_ wsi: OpaquePointer, _ response: Response) -> Int32 {
        guard let session = sessions[UInt(bitPattern: wsi)] else { return -1 }
        counters.withLock { $0.answered[response.status, default: 0] += 1 }
        var head = [UInt8](repeating: 0, count: aseqosc_lws_pre + 512)
        let written: Int? = head.withUnsafeMutableBufferPointer { buffer in
            let start = buffer.baseAddress! + aseqosc_lws_pre
            let end = buffer.baseAddress! + buffer.count
            var position: UnsafeMutablePointer<UInt8>? = start
            guard
                lws_add_http_common_headers(
                    wsi, UInt32(response.status), response.type, lws_filepos_t(response.body.count), &position, end)
                    == 0
            else { return nil }
            if let allow = response.allow,
                lws_add_http_header_by_name(wsi, "allow:", allow, Int32(allow.utf8.count), &position, end) != 0
            {
                return nil
            }
            // The page and its answers are not to be framed by, or sniffed as, anything else.
            if response.type?.hasPrefix("text/html") == true {
                let policy =
                    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
                    + "frame-ancestors 'none'"
                guard
                    lws_add_http_header_by_name(
                        wsi, "content-security-policy:", policy, Int32(policy.utf8.count), &position, end) == 0
                else { return nil }
            }
            guard lws_add_http_header_by_name(wsi, "x-content-type-options:", "nosniff", 7, &position, end) == 0,
                lws_finalize_write_http_header(wsi, start, &position, end) == 0
            else { return nil }
            return 0
        }
        guard written != nil else { return -1 }
        if session.isHead || response.body.isEmpty {
            return lws_http_transaction_completed(wsi) != 0 || session.closeAfterAnswer ? -1 : 0
        }
        session.body = [UInt8](repeating: 0, count: aseqosc_lws_pre) + response.body
        session.bodyOffset = aseqosc_lws_pre
        lws_callback_on_writable(wsi)
        return 0
    }

    /// A request header's value, or nil when it is absent (or longer than 1 KiB).
    private func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = lws_hdr_total_length(wsi, token)
        guard length > 0, length < 1024 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(length) + 1)
        guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Takes `action` on a thread of its own (a reload may restart this very server, whose
    /// thread must not wait for itself); the answer goes out when it is done.
    private func start(_ action: StatusPageAction, for key: UInt, page: any StatusPageSource) {
        let handler = self
        _ = SystemThread(name: "aseqosc-action") {
            let result = page.perform(action)
            handler.finishedActions.withLock { $0.append((key, action, result)) }
            handler.wake()
        }
    }

    /// Answers the actions done since the last look.
    private func answerFinishedActions() {
        for (key, action, result) in finishedActions.withLock({ finished in
            defer { finished = [] }
            return finished
        }) {
            guard let wsi = OpaquePointer(bitPattern: key), sessions[key] != nil else { continue }
            let response: Response
            switch result {
            case .success(let line):
                counters.withLock { $0.actionsDone += 1 }
                response = .text(200, "done: \(action.rawValue): \(line)")
            case .failure(let refusal):
                response = .text(409, "refused: \(action.rawValue): \(refusal.reason)")
            }
            sessions[key]?.pendingResponse = response
            lws_callback_on_writable(wsi)
        }
    }

    /// The answer from the current namespace; the whole tree from the kept copy.
    private func answer(path: String, attributes: [String]) -> OSCQueryAnswer {
        let current = content.withLock { $0 }
        let isRoot = attributes.isEmpty && path.split(separator: "/").isEmpty
        if isRoot, let root = current.root { return root }
        // The kept root leaves VALUE out: values change, the tree does not.
        let answer = current.namespace.answer(
            path: path, attributes: attributes, hostInfo: current.hostInfo, values: values, webSocket: true,
            withValues: !isRoot)
        if isRoot {
            // Kept unless a reload swapped the namespace meanwhile.
            content.withLock { if $0.version == current.version { $0.root = answer } }
        }
        return answer
    }

    /// The query's keys in order (`?TYPE` gives `["TYPE"]`), at most 8.
    private func queryKeys(_ wsi: OpaquePointer) -> [String] {
        var keys: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        for index in 0..<8 {
            let count = lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, Int32(index))
            guard count >= 0 else { break }
            let fragment = String(decoding: buffer.prefix(Int(count)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            keys.append(String(fragment.prefix { $0 != "=" }))
        }
        return keys
    }

    /// Writes the next piece of an HTTP body; the connection goes on (keep-alive) or closes
    /// once the last one is out.
    private func writeBody(_ wsi: OpaquePointer) -> Int32 {
        if let response = sessions[UInt(bitPattern: wsi)]?.pendingResponse {
            sessions[UInt(bitPattern: wsi)]?.pendingResponse = nil
            return respond(wsi, response)
        }
        guard let session = sessions[UInt(bitPattern: wsi)], session.bodyOffset < session.body.count else { return 0 }
        let count = min(session.body.count - session.bodyOffset, 32_768)
        let last = session.bodyOffset + count == session.body.count
        let result = session.body.withUnsafeMutableBufferPointer { buffer in
            lws_write(
                wsi, buffer.baseAddress! + session.bodyOffset, count, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP)
        }
        guard result >= 0 else { return -1 }
        session.bodyOffset += count
        if !last {
            lws_callback_on_writable(wsi)
            return 0
        }
        session.body = []
        session.bodyOffset = 0
        return lws_http_transaction_completed(wsi) != 0 || session.closeAfterAnswer ? -1 : 0
    }

    // MARK: WebSocket

    private func established(_ wsi: OpaquePointer) {
        sessions[UInt(bitPattern: wsi)]?.isWebSocket = true
        counters.withLock {
            $0.webSockets += 1
            $0.webSocketsOpen += 1
        }
    }

    private func closed(_ wsi: OpaquePointer) {
        let key = UInt(bitPattern: wsi)
        guard let session = sessions[key], session.isWebSocket else { return }
        for path in session.listens { stopListening(key, to: path) }
        let listens = UInt64(session.listens.count)
        session.listens = []
        let watched = session.wantsStatus || session.wantsMonitor
        session.wantsStatus = false
        session.wantsMonitor = false
        counters.withLock {
            $0.webSocketsOpen -= 1
            $0.listening -= listens
            if watched { $0.pagesWatching -= 1 }
        }
        if monitoring && !sessions.values.contains(where: \.wantsMonitor) { stopMonitoring() }
    }

    private func received(_ wsi: OpaquePointer, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        let key = UInt(bitPattern: wsi)
        guard let session = sessions[key], session.closing == nil else { return -1 }
        if lws_frame_is_binary(wsi) != 0 {
            if lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0 {
                counters.withLock { $0.framesIgnored += 1 }
            }
            return 0
        }
        guard session.text.count + bytes.count <= OSCQueryCommand.textLimit else {
            counters.withLock { $0.closedOversized += 1 }
            var reason = Array("text frame over \(OSCQueryCommand.textLimit) bytes".utf8)
            lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, &reason, reason.count)
            return -1
        }
        session.text += bytes
        guard lws_is_final_fragment(wsi) != 0, lws_remaining_packet_payload(wsi) == 0 else { return 0 }
        let text = String(decoding: session.text, as: UTF8.self)
        session.text = []
        let methods = content.withLock { $0.namespace.root }
        switch OSCQueryCommand(text) {
        case .listen(let path) where methods.node(at: path.split(separator: "/"))?.method != nil:
            guard !session.listens.contains(path) else { return 0 }
            guard session.listens.count < limits.listensPerClient else {
                counters.withLock { $0.closedTooManyListens += 1 }
                var reason = Array("more than \(limits.listensPerClient) listens".utf8)
                lws_close_reason(wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION, &reason, reason.count)
                return -1
            }
            session.listens.insert(path)
            listeners[path, default: []].insert(key)
            counters.withLock { $0.listening += 1 }
            scheduleTick()
        case .status where page != nil, .monitor where page != nil:
            if !session.wantsStatus && !session.wantsMonitor { counters.withLock { $0.pagesWatching += 1 } }
            if case .status = OSCQueryCommand(text) {
                session.wantsStatus = true
                // The next tick sends it the status, changed or not.
                lastStatus = ""
                ticksSinceStatus = Self.statusTicks
            } else {
                session.wantsMonitor = true
                if !monitoring {
                    monitoring = true
                    page?.source.setMonitoring(true)
                }
            }
            scheduleTick()
        case .ignore(let path) where session.listens.contains(path):
            session.listens.remove(path)
            stopListening(key, to: path)
            counters.withLock { $0.listening -= 1 }
        default:
            counters.withLock { $0.framesIgnored += 1 }
        }
        return 0
    }

    private func stopListening(_ key: UInt, to path: String) {
        listeners[path]?.remove(key)
        if listeners[path]?.isEmpty == true { listeners[path] = nil }
    }

    /// Queues a frame for a WebSocket client; one that lets too much pile up is closed.
    private func queue(_ payload: [UInt8], binary: Bool, to key: UInt) {
        guard let session = sessions[key], session.isWebSocket, session.closing == nil else { return }
        guard session.queuedBytes + payload.count <= limits.queuedBytes else {
            session.closing = LWS_CLOSE_STATUS_POLICY_VIOLATION
            session.frames = []
            counters.withLock { $0.closedSlow += 1 }
            // A client that does not read is never writable: it is closed from here.
            lws_set_timeout(OpaquePointer(bitPattern: key), PENDING_TIMEOUT_USER_OK, -1)
            return
        }
        session.frames.append(([UInt8](repeating: 0, count: aseqosc_lws_pre) + payload, binary))
        session.queuedBytes += payload.count
        lws_callback_on_writable(OpaquePointer(bitPattern: key))
    }

    private func writeFrame(_ wsi: OpaquePointer) -> Int32 {
        guard let session = sessions[UInt(bitPattern: wsi)] else { return -1 }
        if session.closing != nil { return -1 }
        guard session.framesStart < session.frames.count else { return 0 }
        let count = session.frames[session.framesStart].bytes.count - aseqosc_lws_pre
        let binary = session.frames[session.framesStart].binary
        let result = session.frames[session.framesStart].bytes.withUnsafeMutableBufferPointer { buffer in
            lws_write(wsi, buffer.baseAddress! + aseqosc_lws_pre, count, binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT)
        }
        guard result >= 0 else { return -1 }
        session.framesStart += 1
        session.queuedBytes -= count
        if session.framesStart == session.frames.count {
            session.frames = []
            session.framesStart = 0
        } else {
            if session.framesStart >= 64 {
                session.frames.removeFirst(session.framesStart)
                session.framesStart = 0
            }
            lws_callback_on_writable(wsi)
        }
        return 0
    }

    private func scheduleTick() {
        guard !tickScheduled else { return }
        tickScheduled = true
        aseqosc_ws_schedule(context, Int64(limits.listenMilliseconds) * 1000)
    }

    /// Sends each listened method whose value changed since the last tick its latest value.
    func sendChangedValues() {
        tickScheduled = false
        let watching = page != nil && sessions.values.contains { $0.wantsStatus || $0.wantsMonitor }
        if watching { sendPageUpdates() }
        guard let values else {
            if watching { scheduleTick() }
            return
        }
        var changed: [String] = []
        values.takeChanges { path in if listeners[path] != nil { changed.append(path) } }
        for path in changed {
            guard let arguments = values.value(at: path),
                let bytes = try? OSCPacket.message(OSCMessage(path, arguments)).serialize()
            else { continue }
            for key in listeners[path] ?? [] { queue(bytes, binary: true, to: key) }
            counters.withLock { $0.valuesSent += UInt64(listeners[path]?.count ?? 0) }
        }
        if !listeners.isEmpty || watching { scheduleTick() }
    }

    /// Ticks between two looks at the status (every 500 ms).
    static let statusTicks = 50

    /// To the pages watching: the events seen since the last tick, and every 500 ms the status
    /// if it changed.
    private func sendPageUpdates() {
        guard let source = page?.source else { return }
        let watchers = sessions.filter { $0.value.isWebSocket && $0.value.closing == nil }
        ticksSinceEvents += 1
        if monitoring && ticksSinceEvents >= 5 {
            ticksSinceEvents = 0
            var lines: [JSONValue] = []
            let dropped = source.takeMonitorLines { lines.append(.string($0)) }
            if !lines.isEmpty || dropped > 0 {
                let frame = Array(
                    JSONWriter.text(.object(["EVENTS": .array(lines), "DROPPED": .number(Double(dropped))])).utf8)
                for (key, session) in watchers where session.wantsMonitor { queue(frame, binary: false, to: key) }
            }
        }
        ticksSinceStatus += 1
        guard ticksSinceStatus >= Self.statusTicks else { return }
        ticksSinceStatus = 0
        let status = source.statusJSON()
        guard status != lastStatus else { return }
        lastStatus = status
        let frame = Array(("{\"STATUS\":" + status + "}").utf8)
        for (key, session) in watchers where session.wantsStatus { queue(frame, binary: false, to: key) }
    }

    /// After a reload: PATH_REMOVED and PATH_ADDED (or one PATH_CHANGED) to every WebSocket
    /// client, and the listens on methods that are gone dropped.
    private func tellNamespaceChanges() {
        let current = content.withLock { $0 }
        guard current.version != methodsVersion else { return }
        methodsVersion = current.version
        let now = current.namespace.root.methodPaths
        let changes = OSCQueryPathChange.changes(from: methods, to: now)
        for path in methods.subtracting(now) {
            for key in listeners[path] ?? [] {
                sessions[key]?.listens.remove(path)
                counters.withLock { $0.listening -= 1 }
            }
            listeners[path] = nil
        }
        methods = now
        let clients = sessions.filter { $0.value.isWebSocket }.map(\.key)
        for change in changes {
            let text = Array(change.text.utf8)
            for key in clients { queue(text, binary: false, to: key) }
            counters.withLock { $0.pathChangesSent += UInt64(clients.count) }
        }
    }
}
