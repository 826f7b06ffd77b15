import Foundation
import Glibc
import TestSupport
import XCTest

/// `realtime`: the input and OSC threads under SCHED_FIFO where the system allows it,
/// as the kernel reports them in /proc/PID/task/*/sched, and as `aseqosc status` shows them;
/// refused, one log line and normal priority (run against the kernel sequencer in the ALSA VM).
final class RealtimeALSATests: XCTestCase {
    var amidi = ""

    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
        amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
    }

    /// MIDI in from virmidi 0 to OSC on 9211, and OSC in on 9212 to Midi Through, so that all
    /// three event threads run.
    static func config(realtime: String) -> String {
        """
        { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
          outputs: [{ name: "thru", to: "Midi Through" }],
          osc: { listen: "127.0.0.1:9212" },
          routes: [{ destinations: [{ host: "127.0.0.1", port: 9211 }] }],
          \(realtime) }
        """
    }

    /// Each thread's name (`comm`), policy (1 is SCHED_FIFO, 0 SCHED_OTHER) and SCHED_FIFO
    /// priority, from /proc/PID/task/*/sched (whose `prio` is 99 minus the priority under FIFO).
    static func threads(of pid: Int32) throws -> [(name: String, policy: Int, priority: Int)] {
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        return try tasks.sorted().map { task in
            let folder = "/proc/\(pid)/task/\(task)"
            let name = try String(contentsOfFile: "\(folder)/comm", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let sched = try String(contentsOfFile: "\(folder)/sched", encoding: .utf8)
            func field(_ key: String) -> Int? {
                sched.split(separator: "\n").first { $0.hasPrefix(key + " ") }
                    .flatMap { Int($0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) }
            }
            let policy = field("policy") ?? -1
            return (name, policy, policy == 1 ? 99 - (field("prio") ?? 99) : 0)
        }
    }

    func policies(_ bridge: RunningBridge) throws -> [String: String] {
        var byName: [String: String] = [:]
        for thread in try Self.threads(of: bridge.bridge.pid) {
            byName[thread.name] = thread.policy == 1 ? "fifo/\(thread.priority)" : "policy \(thread.policy)"
        }
        return byName
    }

    func status(_ bridge: RunningBridge, json: Bool = false) throws -> String {
        let result = try runProcess(
            TestEnvironment.aseqoscBinary, ["status", "--control", bridge.controlPath] + (json ? ["--json"] : []))
        XCTAssertEqual(result.status, 0, result.standardError)
        return result.standardOutput
    }

    func testEventThreadsRunFIFOAtTheConfiguredPriorityAndKeepItThroughAReload() throws {
        try XCTSkipUnless(getuid() == 0, "needs root (the ALSA VM), which may use SCHED_FIFO")
        let config = Self.config(realtime: "realtime: { priority: 30 }")
        let bridge = try RunningBridge(config: config, oscPorts: [9211])
        let expected = [
            "aseqosc-input": "fifo/30", "aseqosc-osc-in": "fifo/30",
            "aseqosc": "policy 0", "aseqosc-control": "policy 0",
        ]
        XCTAssertEqual(try policies(bridge).filter { expected[$0.key] != nil }, expected)
        let text = try status(bridge)
        // 127.0.0.1 is on this machine: the sending thread stays on the VM's one CPU.
        XCTAssertTrue(
            text.contains("threads: input fifo/30 on CPU 0, osc fifo/30; memory locked"),
            text)
        let document = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(try status(bridge, json: true).utf8)) as? [String: Any])
        let realtime = try XCTUnwrap(document["realtime"] as? [String: Any])
        XCTAssertEqual(realtime["requestedPriority"] as? Int, 30)
        XCTAssertEqual(realtime["memoryLocked"] as? Bool, true)
        let threads = try XCTUnwrap(realtime["threads"] as? [[String: Any]])
        XCTAssertEqual(threads.map { $0["name"] as? String }, ["input", "osc"])
        XCTAssertEqual(threads.map { $0["policy"] as? String }, ["fifo", "fifo"])
        XCTAssertEqual(threads.map { $0["priority"] as? Int }, [30, 30])
        XCTAssertEqual(threads.map { $0["cpu"] as? Int }, [0, nil])
        let locked = try String(contentsOfFile: "/proc/\(bridge.bridge.pid)/status", encoding: .utf8)
            .split(separator: "\n").first { $0.hasPrefix("VmLck:") }
        XCTAssertNotEqual(locked.map { $0.filter(\.isNumber) }, "0", "VmLck: \(locked ?? "missing")")
        XCTAssertFalse(bridge.bridge.standardError.contains("realtime:"), bridge.bridge.standardError)

        // A reload makes a new input thread: it is real-time too.
        let before = try Self.threads(of: bridge.bridge.pid).count
        XCTAssertTrue(try bridge.reload(config), bridge.bridge.standardError)
        XCTAssertEqual(try policies(bridge).filter { expected[$0.key] != nil }, expected)
        XCTAssertEqual(try Self.threads(of: bridge.bridge.pid).count, before)
        try play("90 3C 64")
        XCTAssertTrue(bridge.waitForMessages(port: 9211, count: 1))

        // A reload that changes `realtime` says it waits for a restart, and changes nothing.
        XCTAssertTrue(try bridge.reload(Self.config(realtime: "realtime: false")), bridge.bridge.standardError)
        XCTAssertTrue(
            bridge.bridge.standardError.contains(
                "WARNING realtime: the new settings (off (normal priority)) take effect when aseqosc restarts"),
            bridge.bridge.standardError)
        XCTAssertEqual(try policies(bridge).filter { expected[$0.key] != nil }, expected)
    }

    func testRealtimeFalseLeavesEveryThreadAtNormalPriority() throws {
        try XCTSkipUnless(getuid() == 0, "needs root (the ALSA VM), where SCHED_FIFO would be granted")
        let bridge = try RunningBridge(config: Self.config(realtime: "realtime: false"), oscPorts: [9211])
        let policies = try policies(bridge)
        XCTAssertEqual(Set(policies.values), ["policy 0"], "\(policies)")
        XCTAssertNotNil(policies["aseqosc-osc-in"])
        let text = try status(bridge)
        XCTAssertTrue(
            text.contains(
                "threads: input other on CPU 0, osc other; memory not locked (realtime off)"),
            text)
        XCTAssertFalse(bridge.bridge.standardError.contains("realtime:"), bridge.bridge.standardError)
    }

    func testRefusedWithoutRTPRIOLogsOneLineAndTheBridgeRunsAtNormalPriority() throws {
        try XCTSkipUnless(getuid() == 0, "needs root to become an unprivileged user (the ALSA VM)")
        let setpriv = try TestEnvironment.tool("setpriv", package: "util-linux")
        let prlimit = try TestEnvironment.tool("prlimit", package: "util-linux")
        // nobody, RLIMIT_RTPRIO 0 and RLIMIT_MEMLOCK 8 MiB: what a user gets without limits.d.
        let bridge = try RunningBridge(
            config: Self.config(realtime: ""), oscPorts: [9211], controlPath: "/tmp/aseqosc-realtime-test.control",
            launcher: [
                prlimit, "--rtprio=0", "--memlock=8388608", setpriv, "--reuid=65534", "--regid=65534",
                "--clear-groups",
            ])
        let log = bridge.bridge.standardError
        let lines = log.split(separator: "\n").filter { $0.contains("realtime:") }
        XCTAssertEqual(lines.count, 1, log)
        let line = String(lines.first ?? "")
        XCTAssertTrue(line.contains("WARNING realtime: SCHED_FIFO 4 refused (EPERM: RLIMIT_RTPRIO is 0)"), line)
        XCTAssertTrue(line.contains("memory not locked (RLIMIT_MEMLOCK is 8192 KiB"), line)
        XCTAssertTrue(line.contains("LimitRTPRIO=4") && line.contains("/etc/security/limits.d"), line)
        XCTAssertEqual(Set(try policies(bridge).values), ["policy 0"])

        try play("90 3C 64")
        XCTAssertTrue(bridge.waitForMessages(port: 9211, count: 1), "the bridge still forwards")
        XCTAssertEqual(bridge.messages(port: 9211), ["/midi/keys/1/note_on ii 60 100"])
    }

    /// `realtime.cpu: "auto"` keeps the input thread on one CPU exactly while a
    /// destination is on this machine: loopback, or one of its own addresses (here 10.99.0.1,
    /// put on lo), and not an address that is only routed through lo (198.51.100.7).
    /// `cpu: false` never pins; a CPU the process may not use stops the start with the reason.
    func testSendingThreadsStayOnOneCPUWhileADestinationIsOnThisMachine() throws {
        try XCTSkipUnless(getuid() == 0, "needs root (the ALSA VM) to give lo an address and a route")
        let ip = try TestEnvironment.tool("ip", package: "iproute2")
        XCTAssertEqual(try runProcess(ip, ["addr", "add", "10.99.0.1/32", "dev", "lo"]).status, 0)
        XCTAssertEqual(try runProcess(ip, ["route", "add", "198.51.100.0/24", "dev", "lo"]).status, 0)
        defer {
            _ = try? runProcess(ip, ["addr", "del", "10.99.0.1/32", "dev", "lo"])
            _ = try? runProcess(ip, ["route", "del", "198.51.100.0/24", "dev", "lo"])
        }
        func config(host: String, cpu: String = "") -> String {
            """
            { inputs: [{ name: "keys", from: "Virtual Raw MIDI 0-0" }],
              routes: [{ destinations: [{ host: "\(host)", port: 9211 }] }],
              realtime: { priority: 4\(cpu) } }
            """
        }
        func placement(_ bridge: RunningBridge) throws -> String {
            try status(bridge).split(separator: "\n").first { $0.hasPrefix("threads:") }.map(String.init) ?? ""
        }
        let bridge = try RunningBridge(config: config(host: "127.0.0.1"), oscPorts: [9211])
        XCTAssertEqual(try placement(bridge), "threads: input fifo/4 on CPU 0; memory locked")
        XCTAssertTrue(
            bridge.bridge.standardError.contains(
                "input thread kept on CPU 0 (127.0.0.1:9211 is on this machine)"),
            bridge.bridge.standardError)

        XCTAssertTrue(try bridge.reload(config(host: "198.51.100.7")), bridge.bridge.standardError)
        XCTAssertEqual(try placement(bridge), "threads: input fifo/4; memory locked")
        let log = bridge.bridge.standardError
        XCTAssertTrue(log.contains("input thread runs on any CPU"), log)

        XCTAssertTrue(try bridge.reload(config(host: "10.99.0.1")), bridge.bridge.standardError)
        XCTAssertEqual(try placement(bridge), "threads: input fifo/4 on CPU 0; memory locked")
        try play("90 3C 64")
        XCTAssertTrue(bridge.waitForMessages(port: 9211, count: 1), "pinned threads still forward")
        bridge.stop()

        let any = try RunningBridge(config: config(host: "127.0.0.1", cpu: ", cpu: false"), oscPorts: [])
        XCTAssertEqual(try placement(any), "threads: input fifo/4; memory locked")
        any.stop()

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aseqosc-cpu-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("config.json5")
        try config(host: "127.0.0.1", cpu: ", cpu: 7").write(to: file, atomically: true, encoding: .utf8)
        let refused = try runProcess(
            TestEnvironment.aseqoscBinary,
            ["run", "--config", file.path, "--control", directory.appendingPathComponent("control").path])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(
            refused.standardError.contains(
                "realtime.cpu: this process may not run on CPU 7 (taskset, CPUAffinity= or its cgroup keep it off it); "
                    + "CPU 0 is one it may use"),
            refused.standardError)
    }

    func play(_ hex: String) throws {
        XCTAssertEqual(try runProcess(amidi, ["-p", "hw:0,0", "-S", hex]).status, 0)
    }
}
