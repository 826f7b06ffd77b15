import CWebSockets
import Endpoints
import Glibc
import JSON
import OSC
import OSCQuery
import OSCTransport
import Platform
import Synchronization

/// The library's callbacks and the connections' state, apart from the server so it exists
/// before the context that calls into it. Everything but `content`, `counters` and `stopping`
/// is touched on the server's thread only.
final class ConnectionHandler: @unchecked Sendable {
    /// What the server answers from.
    struct Content {
        var namespace: OSCQueryNamespace
        var hostInfo: OSCQueryHostInfo
        /// Once asked for, the answer to `GET /`: the whole tree, which a large layout takes
        /// long to write (16 outputs: 570 KB) and clients fetch again and again.
        var root: OSCQueryAnswer? = nil
        /// Counts the updates, so that a root written from an older namespace is not kept.
        var version: Int

        package init(_ namespace: OSCQueryNamespace, _ hostInfo: OSCQueryHostInfo, version: Int) {
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

        package init(address: IPAddress) { self.address = address }
    }

    let content: Mutex<Content>
    let counters = Mutex(OSCQueryServer.Counters())
    let stopping = Atomic<Bool>(false)
    let allow: IPAllowList?
    let values: (any OSCQueryValueSource)?
    let limits: OSCQueryServer.Limits

    /// The status page, with its allow-list for actions.
    let page: (source: any StatusPageSource, actions: Set<StatusPageAction>, actionsAllow: IPAllowList)?
    /// Actions done on their threads, waiting to be answered on this one.
    let finishedActions = Mutex<[(UInt, StatusPageAction, Result<String, StatusPageRefusal>)]>([])
    /// Set once the context is destroyed: nothing may wake it then.
    let destroyed = Mutex(false)
    /// When the pages are next sent the status (if it changed; 0: at the next tick) and the
    /// events (monotonic ns), and the last status text sent.
    var statusDue: UInt64 = 0
    var eventsDue: UInt64 = 0
    var lastStatus = ""
    var monitoring = false

    var sessions: [UInt: Session] = [:]
    /// The address of each socket accepted but not yet given a connection.
    var accepted: [Int32: IPAddress] = [:]
    /// The clients listening to each method.
    var listeners: [String: Set<UInt>] = [:]
    /// The methods WebSocket clients were last told about, and the version they came from.
    var methods: Set<String>
    var methodsVersion = 0
    var tickScheduled = false
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

        package init(status: Int, type: String?, body: String, allow: String? = nil) {
            self.status = status
            self.type = status == 204 ? nil : type
            self.body = status == 204 ? [] : Array(body.utf8)
            self.allow = allow
        }

        package init(_ answer: OSCQueryAnswer) {
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
}
