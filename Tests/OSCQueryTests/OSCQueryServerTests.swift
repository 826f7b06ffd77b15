import Endpoints
import Glibc
import JSON
import OSCMapping
import OSCQuery
import OSCQueryHTTP
import OSCTransport
import TestSupport
import Testing

/// The HTTP server on loopback, spoken to over plain sockets: what a client sends, byte for
/// byte, and what comes back.
@Suite(.serialized) struct OSCQueryServerTests {
    static let namespace = OSCQueryNamespace(
        outputNames: ["Synth A"], families: Set(OSCAddressFamily.allCases), mappings: [], sysex: false)
    static let hostInfo = OSCQueryHostInfo(name: "Studio", oscAddress: "127.0.0.1", oscPort: 57200, oscTransport: "UDP")

    static func server(allow: [IPNetwork] = [], limits: OSCQueryServer.Limits = .init()) throws -> OSCQueryServer {
        try OSCQueryServer(
            host: "127.0.0.1", port: 0, allow: allow, namespace: namespace, hostInfo: hostInfo, limits: limits)
    }

    /// A connected TCP socket to 127.0.0.1:`port`, or -1.
    static func connectTo(_ port: UInt16) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let connected = withIPv4Loopback(port: Int(port)) { connect(descriptor, $0, $1) }
        guard connected == 0 else {
            close(descriptor)
            return -1
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return descriptor
    }

    /// Everything the server sends until it closes the connection (or 10 s pass).
    static func readAll(_ descriptor: Int32) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { break }
            received += buffer[..<count]
        }
        return received
    }

    struct Response {
        var status: Int
        var headers: [String]
        var body: String
    }

    /// Sends `request` and reads the response to the end (the requests ask for `Connection: close`).
    static func exchange(_ request: String, port: UInt16) throws -> Response {
        let descriptor = connectTo(port)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let bytes = Array(request.utf8)
        #expect(write(descriptor, bytes, bytes.count) == bytes.count)
        let text = String(decoding: readAll(descriptor), as: UTF8.self)
        let head = text.split(separator: "\r\n\r\n", maxSplits: 1, omittingEmptySubsequences: false)
        let lines = head[0].split(separator: "\r\n").map(String.init)
        let status = lines.first.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) } ?? 0
        return Response(status: status, headers: Array(lines.dropFirst()), body: head.count > 1 ? String(head[1]) : "")
    }

    static func get(_ target: String, port: UInt16, method: String = "GET") throws -> Response {
        try exchange("\(method) \(target) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", port: port)
    }

    /// Waits up to `seconds` for `condition`, checking every 20 ms.
    static func eventually(within seconds: Double = 10, _ condition: () -> Bool) -> Bool {
        for _ in 0..<Int(seconds * 50) {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    @Test func getServesTheNamespaceAsJSONAndQueriesAsTheProposalSays() throws {
        let server = try Self.server()
        #expect(server.port != 0)
        let root = try Self.get("/", port: server.port)
        #expect(root.status == 200)
        // libwebsockets writes header names in lower case, as HTTP/2 must and HTTP/1.1 may.
        #expect(root.headers.contains("content-type: application/json"))
        guard case .object(let fields) = try JSON5Reader.parse(root.body) else {
            Issue.record("not a JSON object: \(root.body.prefix(200))")
            return
        }
        #expect(fields["FULL_PATH"] == .string("/"))
        #expect(try Self.get("/midi/synth_a/1/note_on?TYPE", port: server.port).body == #"{"TYPE":"ii"}"#)
        // Percent-encoding is decoded before the path is looked up.
        #expect(try Self.get("/midi/synth%5Fa/1/note_on?ACCESS", port: server.port).body == #"{"ACCESS":2}"#)
        let info = try Self.get("/?HOST_INFO", port: server.port)
        #expect(
            info.status == 200 && info.body.contains(#""OSC_PORT":57200"#)
                && info.body.contains(#""OSC_IP":"127.0.0.1""#))
        #expect(try Self.get("/nowhere", port: server.port).status == 404)
        #expect(try Self.get("/midi/synth_a/1/note_on?VALUE", port: server.port).status == 204)
        #expect(try Self.get("/?NONSENSE", port: server.port).status == 400)
        let head = try Self.get("/?HOST_INFO", port: server.port, method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty)
        let post = try Self.get("/", port: server.port, method: "POST")
        #expect(post.status == 405 && post.headers.contains("allow: GET, HEAD"), "\(post.headers)")
        let counters = server.counters
        #expect(counters.answered == [200: 5, 204: 1, 400: 1, 404: 1, 405: 1])
        #expect(counters.connections == 9 && counters.closedUnanswered == 0)
    }

    @Test func aReloadSwapsTheNamespace() throws {
        let server = try Self.server()
        #expect(try Self.get("/midi/synth_a/1/note_on?TYPE", port: server.port).status == 200)
        // The whole tree is kept once written: the second answer is the first, byte for byte.
        let first = try Self.get("/", port: server.port).body
        let second = try Self.get("/", port: server.port).body
        #expect(first.contains("\"synth_a\"") && first == second)
        let other = OSCQueryNamespace(outputNames: ["Piano"], families: [.default], mappings: [], sysex: false)
        server.update(namespace: other, hostInfo: Self.hostInfo)
        #expect(try Self.get("/midi/synth_a/1/note_on?TYPE", port: server.port).status == 404)
        #expect(try Self.get("/midi/piano/1/note_on?TYPE", port: server.port).status == 200)
        let swapped = try Self.get("/", port: server.port).body
        #expect(swapped.contains("\"piano\"") && !swapped.contains("\"synth_a\""))
    }

    @Test func oversizedRequestsAndGarbageAreRefusedByTheLibraryAndCountedAndTheServerGoesOn() throws {
        let server = try Self.server()
        let long = try Self.get("/" + String(repeating: "a", count: 40_000), port: server.port)
        // The library closes a request whose headers overflow without answering it (status 0).
        #expect([0, 413, 414, 431].contains(long.status), "status \(long.status)")
        let garbage = try Self.exchange("\u{1}\u{2}\u{3} nonsense\r\n\r\n", port: server.port)
        #expect([0, 400, 403].contains(garbage.status), "\(garbage)")
        #expect(Self.eventually { server.counters.closedUnanswered == 2 })
        #expect(try Self.get("/?HOST_INFO", port: server.port).status == 200)
        #expect(server.counters.answered == [200: 1])
    }

    @Test func silentConnectionsAreClosedAtTheIdleLimitAndTheLimitOnConnectionsHolds() throws {
        var limits = OSCQueryServer.Limits()
        limits.connections = 8
        limits.connectionsPerAddress = 8
        limits.idleSeconds = 1
        let server = try Self.server(limits: limits)
        let idle = (0..<8).map { _ in Self.connectTo(server.port) }
        defer { for descriptor in idle { close(descriptor) } }
        #expect(idle.allSatisfy { $0 >= 0 })
        #expect(Self.eventually { server.counters.open == 8 })
        // A ninth is closed as it connects, and counted.
        let ninth = Self.connectTo(server.port)
        if ninth >= 0 {
            let request = Array("GET /?HOST_INFO HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
            _ = write(ninth, request, request.count)
            #expect(Self.readAll(ninth).count == 0)
            close(ninth)
        }
        #expect(Self.eventually { server.counters.refusedOverLimit == 1 })
        // Each silent one is closed once its second is up: the client reads the end of the stream.
        for descriptor in idle { #expect(Self.readAll(descriptor).count == 0) }
        #expect(Self.eventually { server.counters.closedUnanswered == 8 && server.counters.open == 0 })
        #expect(try Self.get("/?HOST_INFO", port: server.port).status == 200)
    }

    @Test func addressesOutsideTheAllowListAreRefusedAsTheyConnect() throws {
        let server = try Self.server(allow: [try IPNetwork(parsing: "10.0.0.0/8")])
        let descriptor = Self.connectTo(server.port)
        if descriptor >= 0 {
            let request = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            _ = write(descriptor, request, request.count)
            #expect(Self.readAll(descriptor).count == 0)
            close(descriptor)
        }
        #expect(Self.eventually { server.counters.refusedNotAllowed == 1 })
        #expect(server.counters.answered.isEmpty)
        let allowed = try Self.server(allow: [try IPNetwork(parsing: "127.0.0.0/8")])
        #expect(try Self.get("/?HOST_INFO", port: allowed.port).status == 200)
    }

    @Test func aValueSourceMakesItsMethodsReadableOverHTTPAndTheKeptRootLeavesValuesOut() throws {
        let server = try OSCQueryServer(
            host: "127.0.0.1", port: 0, allow: [], namespace: Self.namespace, hostInfo: Self.hostInfo,
            values: FakeValues())
        #expect(try Self.get("/midi/synth_a/1/cc?VALUE", port: server.port).body == #"{"VALUE":[7,100]}"#)
        #expect(try Self.get("/midi/synth_a/2/cc?VALUE", port: server.port).body == "{}")
        #expect(try Self.get("/midi/synth_a/1/note_on?VALUE", port: server.port).status == 204)
        let method = try Self.get("/midi/synth_a/1/cc", port: server.port).body
        #expect(method.contains(#""VALUE":[7,100]"#) && method.contains(#""ACCESS":3"#))
        let root = try Self.get("/", port: server.port).body
        #expect(root.contains(#""ACCESS":3"#) && !root.contains(#""VALUE""#))
        let info = try Self.get("/?HOST_INFO", port: server.port).body
        #expect(info.contains(#""VALUE":true"#) && info.contains(#""LISTEN":true"#))
    }

    @Test func aPortInUseIsAClearError() throws {
        let first = try Self.server()
        #expect(throws: OSCQueryServerError.self) {
            _ = try OSCQueryServer(
                host: "127.0.0.1", port: first.port, allow: [], namespace: Self.namespace, hostInfo: Self.hostInfo)
        }
        do {
            _ = try OSCQueryServer(
                host: "127.0.0.1", port: first.port, allow: [], namespace: Self.namespace, hostInfo: Self.hostInfo)
        } catch {
            #expect(
                error.description == "cannot listen on 127.0.0.1:\(first.port) for OSCQuery: Address already in use")
        }
    }
}
