import Glibc
import OSC
import OSCMapping
import OSCQuery
import OSCQueryHTTP
import Synchronization
import TestSupport
import Testing

/// A value source whose values a test sets; each set is a change the server takes.
final class ChangingValues: OSCQueryValueSource {
    private let state = Mutex<(values: [String: [OSCArgument]], changed: Set<String>)>(([:], []))

    func set(_ path: String, _ arguments: [OSCArgument]) {
        state.withLock {
            $0.values[path] = arguments
            $0.changed.insert(path)
        }
    }

    /// Marks every path in `paths` changed, with the value `[7, round]`.
    func setAll(_ paths: [String], round: Int32) {
        state.withLock {
            for path in paths { $0.values[path] = [.int32(7), .int32(round)] }
            $0.changed.formUnion(paths)
        }
    }

    func value(at path: String) -> [OSCArgument]? { state.withLock { $0.values[path] } }
    func isReadable(_ path: String) -> Bool { path.hasSuffix("/cc") }
    func takeChanges(_ body: (String) -> Void) {
        let changed = state.withLock { state in
            defer { state.changed = [] }
            return state.changed
        }
        for path in changed { body(path) }
    }
}

/// The WebSocket side of the OSCQuery server, spoken to by a real client: python's
/// `websockets` (PyPI) through `oscquery-ws.py`, which prints each frame it receives.
@Suite(.serialized, .enabled(if: webSocketClientInstalled, "python3 with websockets and python-osc"))
struct OSCQueryWebSocketTests {
    static let client = "\(#filePath)".replacingSuffix("OSCQueryWebSocketTests.swift", with: "oscquery-ws.py")

    static func namespace(_ outputs: [String]) -> OSCQueryNamespace {
        OSCQueryNamespace(outputNames: outputs, families: [.default], mappings: [], sysex: false)
    }
    static let hostInfo = OSCQueryHostInfo(name: "Studio", oscAddress: "127.0.0.1", oscPort: 57200, oscTransport: "UDP")

    static func server(_ values: ChangingValues, limits: OSCQueryServer.Limits = .init()) throws -> OSCQueryServer {
        try OSCQueryServer(
            host: "127.0.0.1", port: 0, allow: [], namespace: namespace(["Synth A", "Synth B"]), hostInfo: hostInfo,
            limits: limits, values: values)
    }

    static func connect(_ server: OSCQueryServer, _ arguments: [String]) throws -> BackgroundProcess {
        let process = BackgroundProcess(
            webSocketPython!, [client, "ws://127.0.0.1:\(server.port)/"] + arguments)
        try process.start()
        return process
    }

    static func lines(_ process: BackgroundProcess) -> [String] {
        process.standardOutput.split(separator: "\n").map(String.init).filter { $0 != "ready" }
    }

    @Test func aListenedMethodsChangesArriveAsOSCFramesUntilIgnored() throws {
        let values = ChangingValues()
        let server = try Self.server(values)
        let listener = try Self.connect(server, ["--listen", "/midi/synth_a/1/cc", "--timeout", "20"])
        defer { listener.stop() }
        #expect(waitUntil { server.counters.listening == 1 })
        values.set("/midi/synth_a/1/cc", [.int32(7), .int32(100)])
        values.set("/midi/synth_a/2/cc", [.int32(1), .int32(5)])  // not listened to
        #expect(listener.waitForOutput { $0.contains("osc /midi/synth_a/1/cc 7 100") }, "\(listener.standardOutput)")
        // Three moves within one period: the latest is sent, once.
        values.set("/midi/synth_a/1/cc", [.int32(7), .int32(101)])
        values.set("/midi/synth_a/1/cc", [.int32(7), .int32(102)])
        #expect(listener.waitForOutput { $0.contains("osc /midi/synth_a/1/cc 7 102") }, "\(listener.standardOutput)")
        #expect(!Self.lines(listener).contains { $0.contains("synth_a/2") })
        #expect(server.counters.valuesSent == UInt64(Self.lines(listener).count))
        #expect(server.counters.webSockets == 1 && server.counters.webSocketsOpen == 1)
        // The same port still answers HTTP while the WebSocket is open.
        #expect(try OSCQueryServerTests.get("/midi/synth_a/1/cc?VALUE", port: server.port).body.contains("[7,102]"))

        // A second client listens, then ignores: it receives nothing.
        let ignorer = try Self.connect(
            server, ["--listen", "/midi/synth_a/1/cc", "--ignore", "/midi/synth_a/1/cc", "--timeout", "20"])
        defer { ignorer.stop() }
        #expect(waitUntil { server.counters.webSocketsOpen == 2 && server.counters.listening == 1 })
        values.set("/midi/synth_a/1/cc", [.int32(7), .int32(1)])
        #expect(listener.waitForOutput { $0.contains("osc /midi/synth_a/1/cc 7 1\n") })
        #expect(Self.lines(ignorer).isEmpty, "\(ignorer.standardOutput)")
        listener.stop()
        #expect(waitUntil { server.counters.webSocketsOpen == 1 && server.counters.listening == 0 })
    }

    @Test func aReloadTellsEveryClientWhichContainersWentAndCameAndDropsTheirListens() throws {
        let values = ChangingValues()
        let server = try Self.server(values)
        let client = try Self.connect(server, ["--listen", "/midi/synth_b/1/cc", "--count", "2"])
        defer { client.stop() }
        #expect(waitUntil { server.counters.listening == 1 })
        server.update(namespace: Self.namespace(["Synth A", "Piano"]), hostInfo: Self.hostInfo)
        let result = client.wait(timeout: 20)
        #expect(result.status == 0, "\(result.standardOutput) \(result.standardError)")
        #expect(
            Self.lines(client) == [
                #"text {"COMMAND":"PATH_REMOVED","DATA":"/midi/synth_b"}"#,
                #"text {"COMMAND":"PATH_ADDED","DATA":"/midi/piano"}"#,
            ])
        #expect(server.counters.listening == 0 && server.counters.pathChangesSent == 2)
        #expect(try OSCQueryServerTests.get("/midi/piano/1/cc?ACCESS", port: server.port).body == #"{"ACCESS":3}"#)
    }

    @Test func hostileClientsAreClosedAndCountedWhileAListenerGoesOn() throws {
        let values = ChangingValues()
        var limits = OSCQueryServer.Limits()
        limits.queuedBytes = 16_384
        let server = try Self.server(values, limits: limits)
        let listener = try Self.connect(server, ["--listen", "/midi/synth_a/1/cc", "--timeout", "60"])
        defer { listener.stop() }

        // A text frame past the limit: closed with 1009.
        let oversized = try Self.connect(server, ["--oversized", "100000"])
        #expect(oversized.wait(timeout: 20).standardOutput.contains("closed 1009"), "\(oversized.standardOutput)")
        #expect(server.counters.closedOversized == 1)

        // Frames that are no WebSocket frame: the library closes the connection.
        let garbage = try Self.connect(server, ["--garbage"])
        let garbageResult = garbage.wait(timeout: 20)
        #expect(garbageResult.standardOutput.contains("handshake HTTP/1.1 101"), "\(garbageResult.standardOutput)")
        #expect(garbageResult.standardOutput.contains("closed"))

        // A flood of text that is no command: ignored, counted.
        let flood = try Self.connect(server, ["--flood", "5000", "--timeout", "2"])
        _ = flood.wait(timeout: 30)
        #expect(waitUntil(timeout: 20) { server.counters.framesIgnored >= 5000 }, "\(server.counters)")

        // A client that listens to every method and never reads: closed once 16 KB wait for it.
        let paths = Self.namespace(["Synth A", "Synth B"]).root.methodPaths.sorted()
        let sleeper = try Self.connect(server, paths.flatMap { ["--listen", $0] } + ["--no-read", "--timeout", "30"])
        defer { sleeper.stop() }
        #expect(waitUntil { server.counters.listening == UInt64(paths.count + 1) })
        var round: Int32 = 0
        #expect(
            waitUntil(timeout: 30) {
                round += 1
                values.setAll(paths, round: round)
                usleep(2_000)
                return server.counters.closedSlow == 1
            }, "\(server.counters)")
        #expect(waitUntil { server.counters.listening == 1 })

        // The listener got every round's last value, and HTTP still answers.
        values.set("/midi/synth_a/1/cc", [.int32(7), .int32(-1)])
        #expect(listener.waitForOutput { $0.contains("osc /midi/synth_a/1/cc 7 -1") }, "\(server.counters)")
        #expect(try OSCQueryServerTests.get("/?HOST_INFO", port: server.port).status == 200)
        #expect(server.counters.webSocketsOpen == 1)
    }
}

private let webSocketPython = python3(importing: "websockets.sync.client, pythonosc")
private let webSocketClientInstalled = webSocketPython != nil

extension String {
    fileprivate func replacingSuffix(_ suffix: String, with replacement: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) + replacement : self
    }
}
