import Foundation
import TestSupport
import XCTest

/// `aseqosc run` started by a test on a config written to a temporary file, with an `oscdump`
/// listening on each of the given UDP ports.
final class RunningBridge {
    let bridge: BackgroundProcess
    let dumps: [UInt16: BackgroundProcess]
    let directory: URL
    let configFile: URL
    let controlPath: String

    /// `launcher` runs the bridge through another command (`setpriv ...`), which gets the
    /// bridge's command line as its arguments.
    init(
        config: String, oscPorts: [UInt16], environment: [String: String]? = nil, controlPath: String? = nil,
        launcher: [String] = [], file: StaticString = #filePath, line: UInt = #line
    ) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("aseqosc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        configFile = directory.appendingPathComponent("config.json5")
        self.controlPath = controlPath ?? directory.appendingPathComponent("control").path
        try config.write(to: configFile, atomically: true, encoding: .utf8)

        let oscdump = try TestEnvironment.tool("oscdump", package: "liblo-tools")
        var dumps: [UInt16: BackgroundProcess] = [:]
        for port in oscPorts {
            let dump = BackgroundProcess(oscdump, ["-L", String(port)])
            try dump.start()
            dumps[port] = dump
        }
        self.dumps = dumps
        // What is sent before an oscdump has bound its port is refused, not received.
        XCTAssertTrue(
            Self.waitUntil(timeout: 60) { oscPorts.allSatisfy(Self.isUDPPortBound) },
            "oscdump does not listen on \(oscPorts)", file: file, line: line)
        let run = ["run", "--config", configFile.path, "--control", self.controlPath]
        let arguments = launcher + [TestEnvironment.aseqoscBinary] + run
        bridge = BackgroundProcess(arguments[0], Array(arguments.dropFirst()), environment: environment)
        try bridge.start()
        let started = Self.waitUntil(timeout: 60) {
            self.bridge.standardError.contains("NOTICE  running") || !self.bridge.isRunning
        }
        XCTAssertTrue(
            started && bridge.isRunning, "the bridge did not start: \(bridge.standardError)", file: file, line: line)
    }

    /// The OSC messages one oscdump printed, without their time tags.
    func messages(port: UInt16) -> [String] {
        (dumps[port]?.standardOutput ?? "").split(separator: "\n").map { line in
            // oscdump prints "<timetag> <address> <types> <args>"; the time tag varies.
            let parts = line.split(separator: " ", maxSplits: 1)
            return parts.count == 2 ? String(parts[1]).trimmingCharacters(in: .whitespaces) : String(line)
        }
    }

    /// Waits until `port`'s oscdump has printed `count` messages.
    @discardableResult
    func waitForMessages(port: UInt16, count: Int, timeout: TimeInterval = 60) -> Bool {
        Self.waitUntil(timeout: timeout) { self.messages(port: port).count >= count }
    }

    /// Replaces the config file and sends SIGHUP; waits for the log line saying how it went.
    @discardableResult
    func reload(_ config: String) throws -> Bool {
        let before = bridge.standardError.components(separatedBy: "reload").count
        try config.write(to: configFile, atomically: true, encoding: .utf8)
        bridge.signal(SIGHUP)
        return Self.waitUntil(timeout: 60) {
            let text = self.bridge.standardError
            return text.components(separatedBy: "reload").count >= before + 2
        }
    }

    /// Stops the bridge with SIGTERM; returns its result and how long it took to exit.
    @discardableResult
    func stop() -> (ProcessResult, TimeInterval) {
        let start = Date()
        let result = bridge.stop(grace: 5)
        return (result, Date().timeIntervalSince(start))
    }

    deinit {
        if bridge.isRunning { bridge.stop() }
        for dump in dumps.values { dump.stop() }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Whether a socket is bound to UDP `port` on this machine (`/proc/net/udp` and `udp6`, the
    /// local port in hex after the address).
    static func isUDPPortBound(_ port: UInt16) -> Bool {
        let suffix = ":" + String(format: "%04X", port)
        return ["/proc/net/udp", "/proc/net/udp6"].contains { path in
            let lines = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n")
            return lines.dropFirst().contains { $0.split(separator: " ").dropFirst().first?.hasSuffix(suffix) == true }
        }
    }

    static func waitUntil(timeout: TimeInterval, _ condition: () -> Bool) -> Bool {
        TestSupport.waitUntil(timeout: timeout, condition)
    }
}
