// CLiblo: liblo's headers include <sys/socket.h> themselves, and in this test module (which
// loads them) `SOCK_DGRAM` is seen only by files that import CLiblo.
import CLiblo
import Foundation
import Glibc
import TestSupport
import XCTest

/// `aseqosc run` as systemd runs it: the notify protocol, reload with and without mistakes,
/// status over the control socket (run against the kernel sequencer in the ALSA VM).
final class ServiceALSATests: XCTestCase {
    var amidi = ""

    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
        amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
    }

    func play(_ hex: String) throws {
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", hex]).status, 0)
    }

    static func config(routes: String) -> String {
        """
        { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }], routes: [\(routes)] }
        """
    }

    static let keepRoute = #"{ name: "keep", destinations: [{ host: "127.0.0.1", port: 9201 }] }"#
    static let dropRoute = #"{ name: "drop", destinations: [{ host: "127.0.0.1", port: 9202 }] }"#

    func testPlaysSystemdNotifyProtocolWithWatchdogReloadAndStop() throws {
        let socket = try NotifySocket()
        let bridge = try RunningBridge(
            config: Self.config(routes: Self.keepRoute), oscPorts: [9201],
            environment: ["NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "400000"])
        XCTAssertTrue(socket.waitFor { $0.contains { $0.contains("READY=1") } }, "\(socket.messages)")
        let ready = try XCTUnwrap(socket.messages.first { $0.contains("READY=1") })
        XCTAssertTrue(ready.contains("STATUS=1/1 bindings"), ready)
        // 0.4 s watchdog: pings every 0.2 s while the input thread moves.
        XCTAssertTrue(socket.waitFor(timeout: 5) { $0.filter { $0 == "WATCHDOG=1" }.count >= 3 }, "\(socket.messages)")

        try bridge.reload(Self.config(routes: Self.keepRoute))
        XCTAssertTrue(
            socket.waitFor { $0.contains { $0.hasPrefix("RELOADING=1\nMONOTONIC_USEC=") } }, "\(socket.messages)")
        XCTAssertTrue(
            socket.waitFor { messages in
                messages.drop { !$0.hasPrefix("RELOADING=1") }.dropFirst().contains { $0.contains("READY=1") }
            }, "READY=1 after RELOADING=1: \(socket.messages)")

        let (result, _) = bridge.stop()
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(socket.waitFor { $0.contains("STOPPING=1") }, "\(socket.messages)")
    }

    func testReloadReleasesNotesOfTheRemovedRouteOnlyAndKeepsTheOthersHeld() throws {
        let bridge = try RunningBridge(
            config: Self.config(routes: Self.keepRoute + ", " + Self.dropRoute), oscPorts: [9201, 9202])
        try play("90 3C 64 90 40 64")
        bridge.waitForMessages(port: 9201, count: 2)
        bridge.waitForMessages(port: 9202, count: 2)

        XCTAssertTrue(try bridge.reload(Self.config(routes: Self.keepRoute)), bridge.bridge.standardError)
        XCTAssertTrue(bridge.bridge.standardError.contains("NOTICE  reloaded"), bridge.bridge.standardError)
        bridge.waitForMessages(port: 9202, count: 4)
        XCTAssertEqual(
            Array(bridge.messages(port: 9202).dropFirst(2)),
            ["/midi/keys/1/note_off ii 60 0", "/midi/keys/1/note_off ii 64 0"], "the removed route's notes end")
        usleep(300_000)
        XCTAssertEqual(bridge.messages(port: 9201).count, 2, "the kept route's notes stay held")

        // The kept route still knows its notes: the keys' own note-offs end them.
        try play("80 3C 00 80 40 00")
        bridge.waitForMessages(port: 9201, count: 4)
        XCTAssertEqual(
            Array(bridge.messages(port: 9201).dropFirst(2)),
            ["/midi/keys/1/note_off ii 60 0", "/midi/keys/1/note_off ii 64 0"])
        XCTAssertEqual(bridge.messages(port: 9202).count, 4, "nothing more reaches the removed route")
    }

    func testBrokenConfigOnReloadIsRefusedAndTheBridgeKeepsRunning() throws {
        let bridge = try RunningBridge(config: Self.config(routes: Self.keepRoute), oscPorts: [9201])
        XCTAssertTrue(
            try bridge.reload(
                #"{ inputs: [{ name: "keys" }], routes: [{ destinations: [{ host: "a", port: 70000 }] }] }"#))
        XCTAssertTrue(
            bridge.bridge.standardError.contains(
                "ERROR   reload refused, the running config stays: \(bridge.configFile.path): "
                    + "routes[0].destinations[0].port: expected 1-65535, found 70000"),
            bridge.bridge.standardError)
        try play("90 3C 64")
        XCTAssertTrue(bridge.waitForMessages(port: 9201, count: 1))
        XCTAssertEqual(bridge.messages(port: 9201), ["/midi/keys/1/note_on ii 60 100"])
        XCTAssertTrue(bridge.bridge.isRunning)
    }

    func testReloadCommandSaysWhetherTheConfigWasTaken() throws {
        let bridge = try RunningBridge(config: Self.config(routes: Self.keepRoute), oscPorts: [9201, 9202])
        try Self.config(routes: Self.keepRoute + ", " + Self.dropRoute).write(
            to: bridge.configFile, atomically: true, encoding: .utf8)
        let good = try runProcess(TestEnvironment.aseqoscBinary, ["reload", "--control", bridge.controlPath])
        XCTAssertEqual(good.status, 0, good.standardError)
        XCTAssertTrue(good.standardOutput.hasPrefix("reloaded: 1/1 bindings"), good.standardOutput)
        try play("90 3C 64")
        XCTAssertTrue(bridge.waitForMessages(port: 9202, count: 1), "the added route plays")

        try #"{ inputs: [{ name: "keys" }], routes: [{ destinations: [{ host: "a", port: 70000 }] }] }"#.write(
            to: bridge.configFile, atomically: true, encoding: .utf8)
        let bad = try runProcess(TestEnvironment.aseqoscBinary, ["reload", "--control", bridge.controlPath])
        XCTAssertEqual(bad.status, 65)
        XCTAssertEqual(
            bad.standardError,
            "aseqosc: reload refused: \(bridge.configFile.path): routes[0].destinations[0].port: "
                + "expected 1-65535, found 70000\n")
        try play("80 3C 00")
        XCTAssertTrue(bridge.waitForMessages(port: 9202, count: 2), "the running config stays")
        XCTAssertTrue(bridge.bridge.isRunning)
    }

    func testStatusFindsTheOneRunningInstanceAndListsSeveral() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to make instance folders in /run") }
        let folders = ["/run/aseqosc-alpha", "/run/aseqosc-beta"]
        for folder in folders { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        defer { for folder in folders { try? FileManager.default.removeItem(atPath: folder) } }
        let environment = ["XDG_RUNTIME_DIR": ""]
        let alpha = try RunningBridge(
            config: Self.config(routes: Self.keepRoute), oscPorts: [9201], controlPath: folders[0] + "/control")
        let one = try runProcess(TestEnvironment.aseqoscBinary, ["status"], environment: environment)
        XCTAssertEqual(one.status, 0, one.standardError)
        XCTAssertTrue(one.standardOutput.contains("keys <- 'Virtual Raw MIDI 0-0'"), one.standardOutput)

        let beta = try RunningBridge(
            config: Self.config(routes: Self.dropRoute), oscPorts: [9202], controlPath: folders[1] + "/control")
        let several = try runProcess(TestEnvironment.aseqoscBinary, ["status"], environment: environment)
        XCTAssertEqual(several.status, 64)
        XCTAssertTrue(several.standardError.contains("2 aseqosc instances are running; choose one:"), several.standardError)
        XCTAssertTrue(several.standardError.contains("aseqosc@alpha.service   --instance alpha"), several.standardError)
        XCTAssertTrue(several.standardError.contains("aseqosc@beta.service   --instance beta"), several.standardError)
        // A unit's ExecReload reloads its own instance, whoever else runs.
        let own = try runProcess(
            TestEnvironment.aseqoscBinary, ["reload"], environment: ["RUNTIME_DIRECTORY": folders[1]])
        XCTAssertEqual(own.status, 0, own.standardError)
        XCTAssertTrue(own.standardOutput.hasPrefix("reloaded: "), own.standardOutput)
        let chosen = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--instance", "beta"])
        XCTAssertEqual(chosen.status, 0, chosen.standardError)
        XCTAssertTrue(chosen.standardOutput.contains("drop: in 0"), chosen.standardOutput)
        withExtendedLifetime((alpha, beta)) {}
    }

    func testStatusShowsBindingsRoutesAndCounters() throws {
        let bridge = try RunningBridge(config: Self.config(routes: Self.keepRoute), oscPorts: [9201])
        try play("90 3C 64 80 3C 00 B0 01 02")
        bridge.waitForMessages(port: 9201, count: 3)

        let json = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--json", "--control", bridge.controlPath])
        XCTAssertEqual(json.status, 0, json.standardError)
        let status = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        XCTAssertEqual(status["eventsIn"] as? Int, 3)
        XCTAssertEqual(status["inputOverruns"] as? Int, 0)
        let binding = try XCTUnwrap((status["bindings"] as? [[String: Any]])?.first)
        XCTAssertEqual(binding["spec"] as? String, "Virtual Raw MIDI 0-0")
        XCTAssertEqual(binding["connected"] as? [String], ["16:0 Virtual Raw MIDI 0-0:VirMIDI 0-0"])
        let route = try XCTUnwrap((status["routes"] as? [[String: Any]])?.first)
        XCTAssertEqual(route["name"] as? String, "keep")
        XCTAssertEqual(route["eventsIn"] as? Int, 3)
        let destination = try XCTUnwrap((route["destinations"] as? [[String: Any]])?.first)
        XCTAssertEqual(destination["address"] as? String, "127.0.0.1:9201")
        XCTAssertEqual(destination["packetsSent"] as? Int, 3)

        let text = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--control", bridge.controlPath])
        XCTAssertEqual(text.status, 0)
        XCTAssertTrue(
            text.standardOutput.contains("keys <- 'Virtual Raw MIDI 0-0': 16:0 Virtual Raw MIDI 0-0:VirMIDI 0-0"),
            text.standardOutput)
        XCTAssertTrue(text.standardOutput.contains("-> 127.0.0.1:9201 (default): 3 packets"), text.standardOutput)
    }
}

/// A Unix datagram socket standing in for systemd's notify socket, collecting what arrives.
final class NotifySocket: @unchecked Sendable {
    let path: String
    private let descriptor: Int32
    private let lock = NSLock()
    private var received: [String] = []
    private var thread: Thread?

    init() throws {
        path =
            FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8))").path
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        descriptor = fd
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw XCTSkip("cannot bind \(path)") }
        let thread = Thread { [weak self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(fd, &buffer, buffer.count, 0)
                guard count > 0, let self else { return }
                let text = String(decoding: buffer[0..<count], as: UTF8.self)
                self.lock.withLock { self.received.append(text) }
            }
        }
        thread.start()
        self.thread = thread
    }

    var messages: [String] { lock.withLock { received } }

    func waitFor(timeout: TimeInterval = 60, _ condition: ([String]) -> Bool) -> Bool {
        RunningBridge.waitUntil(timeout: timeout) { condition(self.messages) }
    }

    deinit {
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
        unlink(path)
    }
}
