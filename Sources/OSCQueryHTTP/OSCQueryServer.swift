import CMicroHTTPD
import Endpoints
import Glibc
import OSCQuery
import OSCTransport
import Synchronization

/// Why the OSCQuery server did not start.
public struct OSCQueryServerError: Error, Equatable, CustomStringConvertible {
    public var description: String
}

/// The OSCQuery namespace over HTTP (libmicrohttpd, on a thread of its own): `GET /path`,
/// `?HOST_INFO` and attribute queries, answered from an ``OSCQueryNamespace`` a reload can
/// swap, with live values from an ``OSCQueryValueSource`` when one is given (ACCESS 3 and VALUE
/// for the methods it keeps; the whole tree, `GET /`, is kept once written and carries no VALUE,
/// which the proposal leaves optional: a value is asked for with `?VALUE` or `GET /path`).
/// Whatever a client does costs only it: the addresses outside the allow-list are
/// refused as they connect, a request line and headers larger than ``Limits/requestBytes`` are
/// refused by the library, a connection silent for ``Limits/idleSeconds`` is closed, and at
/// most ``Limits/connections`` are open (``Limits/connectionsPerAddress`` from one address).
/// Every outcome is counted. Nothing here touches the bridge's threads.
public final class OSCQueryServer: @unchecked Sendable {
    // @unchecked Sendable: `daemon` is set once; libmicrohttpd's calls on it are thread-safe.
    /// What bounds the clients.
    public struct Limits: Sendable, Equatable {
        public var connections: UInt32 = 64
        public var connectionsPerAddress: UInt32 = 16
        public var idleSeconds: UInt32 = 5
        /// The memory one request may use: its request line and headers.
        public var requestBytes = 16_384

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
        /// Connections open now.
        public var open: UInt64 = 0
    }

    private let handler: RequestHandler
    private let daemon: OpaquePointer
    /// The port it listens on (the one chosen when the config said 0).
    public let port: UInt16
    /// `http://HOST:PORT`.
    public let url: String

    /// Listens on `host` (numeric) and `port` (0: any free one), answering only addresses in
    /// `allow` (empty: everyone, for an input on loopback).
    public init(
        host: String, port: UInt16, allow: [IPNetwork], namespace: OSCQueryNamespace, hostInfo: OSCQueryHostInfo,
        limits: Limits = Limits(), values: (any OSCQueryValueSource)? = nil
    ) throws(OSCQueryServerError) {
        // The socket is bound here, not by the library, so a refusal says why: libmicrohttpd
        // 1.0 (Debian 13) leaves errno EBADF after a failed bind, not EADDRINUSE.
        let listener: Int32
        let isIPv6: Bool
        do {
            let (socket, address) = try ListeningSocket.open(
                host: host, port: Int(port), type: Int32(SOCK_STREAM.rawValue))
            (listener, isIPv6) = (socket, address.family == AF_INET6)
        } catch {
            if error.call == "getaddrinfo" {
                throw OSCQueryServerError(description: "'\(host)' is not a numeric address")
            }
            let reason = String(cString: strerror(error.code))
            throw OSCQueryServerError(description: "cannot listen on \(error.endpoint) for OSCQuery: \(reason)")
        }
        var flags = UInt32(MHD_USE_AUTO_INTERNAL_THREAD.rawValue)
        if isIPv6 { flags |= UInt32(MHD_USE_IPv6.rawValue) }
        handler = RequestHandler(
            namespace: namespace, hostInfo: hostInfo, allow: allow.isEmpty ? nil : IPAllowList(allow), values: values)
        let context = Unmanaged.passUnretained(handler).toOpaque()
        errno = 0
        guard
            let daemon = aseqosc_http_start(
                flags, listener, RequestHandler.acceptPolicy, context, RequestHandler.access, context,
                RequestHandler.connectionChanged, context, limits.connections, limits.connectionsPerAddress,
                limits.idleSeconds, limits.requestBytes)
        else {
            let code = errno
            close(listener)
            if code == ELIBACC {
                throw OSCQueryServerError(
                    description: "libmicrohttpd.so.12 cannot be loaded (apt-get install libmicrohttpd12)")
            }
            let reason = code == 0 ? "libmicrohttpd refused to start" : String(cString: strerror(code))
            let endpoint = isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
            throw OSCQueryServerError(description: "cannot listen on \(endpoint) for OSCQuery: \(reason)")
        }
        self.daemon = daemon
        self.port = aseqosc_http_bound_port(daemon)
        url = isIPv6 ? "http://[\(host)]:\(self.port)" : "http://\(host):\(self.port)"
    }

    deinit {
        // Joins the library's thread: no callback runs after this.
        MHD_stop_daemon(daemon)
    }

    /// Answers from `namespace` and `hostInfo` from now on (after a reload).
    public func update(namespace: OSCQueryNamespace, hostInfo: OSCQueryHostInfo) {
        handler.content.withLock { $0 = RequestHandler.Content(namespace, hostInfo, version: $0.version + 1) }
    }

    /// The counts so far.
    public var counters: Counters { handler.counters.withLock { $0 } }
}

/// The libmicrohttpd callbacks' state, apart from the server so it exists before the daemon
/// that calls into it.
private final class RequestHandler: Sendable {
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

    let content: Mutex<Content>
    let counters = Mutex(OSCQueryServer.Counters())
    /// Connections that had a request answered, until they close.
    private let answeredConnections = Mutex(Set<UInt>())
    private let allow: IPAllowList?
    /// Called on libmicrohttpd's one thread only.
    private let values: (any OSCQueryValueSource)?

    init(
        namespace: OSCQueryNamespace, hostInfo: OSCQueryHostInfo, allow: IPAllowList?,
        values: (any OSCQueryValueSource)?
    ) {
        content = Mutex(Content(namespace, hostInfo, version: 0))
        self.allow = allow
        self.values = values
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> RequestHandler {
        Unmanaged<RequestHandler>.fromOpaque(context!).takeUnretainedValue()
    }

    static let acceptPolicy: MHD_AcceptPolicyCallback = { context, address, _ in
        let handler = from(context)
        guard let allow = handler.allow else { return .YES }
        if let address, let ip = IPAddress(address), allow.allows(ip) { return .YES }
        handler.counters.withLock { $0.refusedNotAllowed += 1 }
        return .NO
    }

    static let connectionChanged: MHD_NotifyConnectionCallback = { context, connection, _, code in
        let handler = from(context)
        let key = UInt(bitPattern: connection)
        if code == .CONNECTION_NOTIFY_STARTED {
            handler.counters.withLock {
                $0.connections += 1
                $0.open += 1
            }
        } else {
            let answered = handler.answeredConnections.withLock { $0.remove(key) != nil }
            handler.counters.withLock {
                $0.open -= 1
                if !answered { $0.closedUnanswered += 1 }
            }
        }
    }

    static let access: MHD_AccessHandlerCallback = {
        context, connection, url, method, _, _, uploadSize, _ in
        guard let connection else { return .NO }
        let handler = from(context)
        let methodName = method.map { String(cString: $0) } ?? ""
        let answer: OSCQueryAnswer
        if methodName == "GET" || methodName == "HEAD" {
            let path = url.map { String(cString: $0) } ?? "/"
            let attributes = queryKeys(connection)
            let current = handler.content.withLock { $0 }
            let isRoot = attributes.isEmpty && path.split(separator: "/").isEmpty
            if isRoot, let root = current.root {
                answer = root
            } else {
                // The kept root leaves VALUE out: values change, the tree does not.
                answer = current.namespace.answer(
                    path: path, attributes: attributes, hostInfo: current.hostInfo, values: handler.values,
                    withValues: !isRoot)
                if isRoot {
                    // Kept unless a reload swapped the namespace meanwhile.
                    handler.content.withLock { if $0.version == current.version { $0.root = answer } }
                }
            }
        } else {
            answer = OSCQueryAnswer(status: 405, body: "only GET and HEAD\n")
        }
        // A body (which GET does not have) is not read: answering now refuses it.
        uploadSize?.pointee = 0
        handler.answeredConnections.withLock { _ = $0.insert(UInt(bitPattern: connection)) }
        handler.counters.withLock { $0.answered[answer.status, default: 0] += 1 }
        return queue(answer, on: connection)
    }

    /// The query's keys in order (`?TYPE` gives `["TYPE"]`), at most 8.
    private static func queryKeys(_ connection: OpaquePointer) -> [String] {
        var keys: [String] = []
        withUnsafeMutablePointer(to: &keys) { pointer in
            _ = MHD_get_connection_values(
                connection, .GET_ARGUMENT_KIND,
                { context, _, key, _ in
                    let keys = context!.assumingMemoryBound(to: [String].self)
                    guard let key, keys.pointee.count < 8 else { return .NO }
                    keys.pointee.append(String(cString: key))
                    return .YES
                }, pointer)
        }
        return keys
    }

    private static func queue(_ answer: OSCQueryAnswer, on connection: OpaquePointer) -> MHD_Result {
        var body = Array(answer.body.utf8)
        let response = body.withUnsafeMutableBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, bytes.baseAddress, .RESPMEM_MUST_COPY)
        }
        guard let response else { return .NO }
        defer { MHD_destroy_response(response) }
        let type = answer.isJSON ? "application/json" : "text/plain; charset=utf-8"
        if answer.status != 204 { _ = MHD_add_response_header(response, "Content-Type", type) }
        if answer.status == 405 { _ = MHD_add_response_header(response, "Allow", "GET, HEAD") }
        return MHD_queue_response(connection, UInt32(answer.status), response)
    }
}
