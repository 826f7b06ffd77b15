import Endpoints
import Glibc
import OSCMapping
import OSCQuery
import OSCQueryHTTP
import Synchronization
import TestSupport
import Testing

/// A page source whose status and monitor lines a test sets, and which records the actions.
final class FakePage: StatusPageSource {
    let monitoring = Atomic<Bool>(false)
    let actions = Mutex<[StatusPageAction]>([])
    let lines = Mutex<[String]>([])

    func statusJSON() -> String { #"{"client":"test","uptimeSeconds":1}"# }
    /// Each time the server turned the monitor on or off, in order.
    let monitorChanges = Mutex<[Bool]>([])
    func setMonitoring(_ on: Bool) {
        monitoring.store(on, ordering: .relaxed)
        monitorChanges.withLock { $0.append(on) }
    }
    /// The lines' read time: 1.5 s on the monotonic clock, or 0 (unknown) for the second and
    /// later of one call.
    func takeMonitorLines(_ body: (String, UInt64) -> Void) -> UInt64 {
        let taken: [String] = lines.withLock { lines in
            defer { lines = [] }
            return lines
        }
        for (index, line) in taken.enumerated() { body(line, index == 0 ? 1_500_000_000 : 0) }
        return 0
    }
    func perform(_ action: StatusPageAction) -> Result<String, StatusPageRefusal> {
        actions.withLock { $0.append(action) }
        return action == .sync ? .failure(StatusPageRefusal("nothing has sync")) : .success("ok")
    }
}

/// The status page beside the namespace: served to browsers at `/`, its actions taken by POST
/// only and from allowed networks only, its status and events over the WebSocket.
@Suite(.serialized) struct StatusPageServerTests {
    static func server(_ page: FakePage, actions: Set<StatusPageAction>, actionsAllow: [String]) throws
        -> OSCQueryServer
    {
        try OSCQueryServer(
            host: "127.0.0.1", port: 0, allow: [], namespace: OSCQueryServerTests.namespace,
            hostInfo: OSCQueryServerTests.hostInfo,
            page: OSCQueryServer.Page(
                source: page, actions: actions, actionsAllow: try actionsAllow.map { try IPNetwork(parsing: $0) }))
    }

    static func request(_ method: String, _ target: String, port: UInt16, headers: [String] = []) throws
        -> OSCQueryServerTests.Response
    {
        let extra = headers.map { $0 + "\r\n" }.joined()
        return try OSCQueryServerTests.exchange(
            "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(extra)Content-Length: 0\r\n"
                + "Connection: close\r\n\r\n", port: port)
    }

    @Test func browsersGetThePageAndOSCQueryClientsTheJSON() throws {
        let server = try Self.server(FakePage(), actions: [], actionsAllow: ["127.0.0.0/8"])
        let page = try Self.request("GET", "/", port: server.port, headers: ["Accept: text/html,*/*;q=0.8"])
        #expect(page.status == 200 && page.headers.contains("content-type: text/html; charset=utf-8"))
        #expect(page.body.contains("<title>aseqosc</title>") && page.body.contains("monitor-events"))
        #expect(page.headers.contains { $0.hasPrefix("content-security-policy: default-src 'none'") })
        // Nothing from elsewhere: no URL in the page but its own WebSocket and actions.
        #expect(!page.body.contains("http://") && !page.body.contains("https://"))
        let json = try Self.request("GET", "/", port: server.port, headers: ["Accept: application/json"])
        #expect(json.headers.contains("content-type: application/json") && json.body.contains(#""FULL_PATH":"/""#))
        #expect(try Self.request("GET", "/", port: server.port).body.contains(#""FULL_PATH":"/""#))
        #expect(server.counters.pagesServed == 1)
    }

    @Test func actionsArePostedFromAllowedNetworksOnlyAndRefusalsCounted() throws {
        let page = FakePage()
        let server = try Self.server(page, actions: [.panic, .sync], actionsAllow: ["127.0.0.0/8"])
        let get = try Self.request("GET", "/aseqosc/action/panic", port: server.port)
        #expect(get.status == 405 && get.headers.contains("allow: POST"))
        let head = try Self.request("HEAD", "/aseqosc/action/panic", port: server.port)
        #expect(head.status == 405)
        let otherSite = try Self.request(
            "POST", "/aseqosc/action/panic", port: server.port, headers: ["Origin: http://evil.example"])
        #expect(otherSite.status == 403)
        #expect(page.actions.withLock { $0 }.isEmpty)
        let panic = try Self.request(
            "POST", "/aseqosc/action/panic", port: server.port, headers: ["Origin: http://127.0.0.1:\(server.port)"])
        #expect(panic.status == 200 && panic.body == "done: panic: ok\n")
        let sync = try Self.request("POST", "/aseqosc/action/sync", port: server.port)
        #expect(sync.status == 409 && sync.body == "refused: sync: nothing has sync\n")
        #expect(try Self.request("POST", "/aseqosc/action/reload", port: server.port).status == 404)
        #expect(page.actions.withLock { $0 } == [.panic, .sync])
        let counters = server.counters
        #expect(counters.actionsRefusedGet == 2 && counters.actionsRefusedOtherSite == 1 && counters.actionsDone == 1)

        // From loopback, which a list without it does not allow.
        let remote = try Self.server(FakePage(), actions: [.panic], actionsAllow: ["10.0.0.0/8"])
        #expect(try Self.request("POST", "/aseqosc/action/panic", port: remote.port).status == 403)
        #expect(remote.counters.actionsRefusedNotAllowed == 1)
    }

    @Test(.enabled(if: python3(importing: "websockets.sync.client, pythonosc") != nil))
    func aWatchingPageGetsTheStatusAndTheEventsAndTheMonitorStopsWhenItLeaves() throws {
        let page = FakePage()
        let server = try Self.server(page, actions: [], actionsAllow: [])
        let client = BackgroundProcess(
            python3(importing: "websockets.sync.client, pythonosc")!,
            [
                OSCQueryWebSocketTests.client, "ws://127.0.0.1:\(server.port)/", "--command", "STATUS", "--command",
                "MONITOR", "--count", "2", "--timeout", "20",
            ])
        try client.start()
        defer { client.stop() }
        #expect(waitUntil { page.monitoring.load(ordering: .relaxed) })
        #expect(server.counters.pagesWatching == 1 && server.counters.pagesMonitoring == 1)
        let before = Self.monotonicMicroseconds()
        page.lines.withLock { $0 = ["in keys: ch 1  note-on  C4 (60)  vel 100", "out keys: a line"] }
        let result = client.wait(timeout: 20)
        let after = Self.monotonicMicroseconds()
        #expect(result.status == 0, "\(result.standardOutput)")
        #expect(result.standardOutput.contains(#"text {"STATUS":{"client":"test","uptimeSeconds":1}}"#))
        // Each line with when it was read (null: unknown), the frame with when it was sent, in
        // microseconds of this machine's CLOCK_MONOTONIC.
        let events =
            #"text {"DROPPED":0,"EVENTS":["in keys: ch 1  note-on  C4 (60)  vel 100","out keys: a line"],"#
            + #""READ":[1500000,null],"SENT":"#
        let sent = result.standardOutput.range(of: events).flatMap { found in
            UInt64(result.standardOutput[found.upperBound...].prefix { $0.isNumber })
        }
        #expect(sent.map { before...after ~= $0 } == true, "\(result.standardOutput)")
        #expect(waitUntil { !page.monitoring.load(ordering: .relaxed) && server.counters.pagesWatching == 0 })
        #expect(server.counters.pagesMonitoring == 0)
    }

    static func monotonicMicroseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000 + UInt64(time.tv_nsec) / 1000
    }

    /// A paused page stops the monitor (the event threads copy nothing for it) and keeps its
    /// status; a second PAUSE is ignored and counted.
    @Test(.enabled(if: python3(importing: "websockets.sync.client, pythonosc") != nil))
    func aPausedPageStopsTheMonitorAndKeepsTheStatus() throws {
        let page = FakePage()
        let server = try Self.server(page, actions: [], actionsAllow: [])
        let client = BackgroundProcess(
            python3(importing: "websockets.sync.client, pythonosc")!,
            [
                OSCQueryWebSocketTests.client, "ws://127.0.0.1:\(server.port)/", "--command", "STATUS", "--command",
                "MONITOR", "--command", "PAUSE", "--command", "PAUSE", "--timeout", "20",
            ])
        try client.start()
        defer { client.stop() }
        #expect(waitUntil { client.standardOutput.contains(#"text {"STATUS":"#) })
        #expect(
            waitUntil { page.monitorChanges.withLock { $0 } == [true, false] && server.counters.framesIgnored == 1 })
        #expect(server.counters.pagesWatching == 1 && server.counters.pagesMonitoring == 0)
    }
}
