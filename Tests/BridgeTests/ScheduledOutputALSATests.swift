import Foundation
import Glibc
import MIDI
import OSC
import TestSupport
import XCTest

/// Bundles scheduled beyond what the kernel's output pool holds, and a daemon idle after a
/// bundle, against the kernel sequencer in the ALSA VM: `amidi` on a virmidi card's raw side
/// counts the notes (aseqdump stops reading at the first overrun of its input pool, which a
/// few hundred events at once cause), `aseqdump` on Midi Through sees the rest,
/// `/proc/asound/seq/queues` shows the queue's timer, `/proc/PID/task/*/status` the daemon's
/// context switches.
final class ScheduledOutputALSATests: XCTestCase {
    var aseqdump = ""
    var stdbuf = ""

    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
        aseqdump = try TestEnvironment.tool("aseqdump", package: "alsa-utils")
        stdbuf = try TestEnvironment.tool("stdbuf", package: "coreutils")
    }

    func startBridge(port: Int) throws -> RunningBridge {
        try RunningBridge(
            config: """
                { outputs: [{ name: "thru", to: "Midi Through" }, { name: "synth", to: "Virtual Raw MIDI 0-0" }],
                  osc: { listen: "127.0.0.1:\(port)" } }
                """,
            oscPorts: [])
    }

    /// `amidi -d` on hw:0,0, the raw side of "Virtual Raw MIDI 0-0".
    func dumpRawMIDI() throws -> BackgroundProcess {
        let amidi = try TestEnvironment.tool("amidi", package: "alsa-utils")
        let dump = BackgroundProcess(stdbuf, ["-oL", amidi, "-p", "hw:0,0", "-d", "-a"])
        try dump.start()
        XCTAssertTrue(waitForRawMIDIReader("hw:0,0"), "amidi does not listen on hw:0,0")
        return dump
    }

    /// The note-ons and note-offs an `amidi -d` printed (running status understood).
    func rawNotes(_ dump: BackgroundProcess) -> (on: Int, off: Int) {
        let hex = dump.standardOutput.filter { $0.isHexDigit }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        var parser = MIDIByteParser(store: SysExStore(slots: 4, capacity: 64))
        let events = parser.parse(bytes)
        return (
            events.filter { $0.kind == .noteOn && $0.velocity > 0 }.count,
            events.filter { $0.kind == .noteOff || ($0.kind == .noteOn && $0.velocity == 0) }.count
        )
    }

    func dumpThrough() throws -> BackgroundProcess {
        let dump = BackgroundProcess(stdbuf, ["-oL", aseqdump, "-p", "14:0"])
        try dump.start()
        XCTAssertTrue(dump.waitForOutput { $0.contains("Waiting for data") })
        return dump
    }

    func count(_ text: String, _ dump: BackgroundProcess) -> Int {
        dump.standardOutput.components(separatedBy: text).count - 1
    }

    /// One bundle for `time` (Unix seconds) holding one message, as a datagram to `port`; a
    /// short pause every 16 so the socket's receive buffer never overflows under emulation.
    func sendBundle(_ port: Int, at time: Double, _ address: String, _ arguments: [OSCArgument], index: Int) throws {
        let bytes = try OSCPacket.bundle(OSCBundle(timeTag: OSCTimeTag(unixTime: time), [.message(OSCMessage(address, arguments))]))
            .serialize()
        XCTAssertEqual(sendUDPDatagram(bytes, toLoopbackPort: port), bytes.count)
        if index % 16 == 15 { usleep(3_000) }
    }

    /// `count` note-ons (on channels 1, 2, 3: 128 notes each) scheduled from `onAt`, then their
    /// note-offs from `offAt`, each in its own bundle, as python-osc sends them; 2 ms apart, so
    /// `aseqdump`'s input pool (it stops reading at an overrun) keeps up.
    func sendNotes(_ port: Int, count: Int, onAt: Double, offAt: Double, output: String = "synth") throws {
        for index in 0..<count {
            try sendBundle(
                port, at: onAt + Double(index) * 0.002, "/midi/\(output)/\(index / 128 + 1)/note_on", [.int32(Int32(index % 128)), .int32(100)],
                index: index)
        }
        for index in 0..<count {
            try sendBundle(
                port, at: offAt + Double(index) * 0.002, "/midi/\(output)/\(index / 128 + 1)/note_off", [.int32(Int32(index % 128)), .int32(0)],
                index: index)
        }
    }

    func status(_ bridge: RunningBridge) throws -> String {
        try runProcess(TestEnvironment.aseqoscBinary, ["status", "--control", bridge.controlPath]).standardOutput
    }

    func testEveryNoteOffOfBundlesBeyondTheKernelsPoolComesOut() throws {
        let dump = try dumpRawMIDI()
        defer { dump.stop() }
        let port = 57341
        let bridge = try startBridge(port: port)
        let start = Date().timeIntervalSince1970
        // 520 events: more than the 500 the kernel's pool holds for a client.
        try sendNotes(port, count: 260, onAt: start + 1.5, offAt: start + 3.5)
        XCTAssertTrue(
            dump.waitForOutput(timeout: 60) { _ in self.rawNotes(dump).off >= 260 }, "\(rawNotes(dump))")
        usleep(300_000)
        XCTAssertEqual(rawNotes(dump).on, 260)
        XCTAssertEqual(rawNotes(dump).off, 260)
        let text = try status(bridge)
        print(text)
        XCTAssertTrue(text.contains("  received   520 packets"), text)
        let synth = text.split(separator: "\n").first { $0.contains("-> synth") }.map(String.init) ?? text
        XCTAssertTrue(synth.contains("520 sent"), synth)
        XCTAssertTrue(synth.contains(" 0 failed; scheduled "), synth)
        XCTAssertFalse(synth.contains("scheduled 0 waited"), "the kernel's pool should have overflowed: \(synth)")
        XCTAssertTrue(synth.hasSuffix("dropped none"), synth)
        let (result, _) = bridge.stop()
        XCTAssertEqual(result.status, 0, result.standardError)
        usleep(200_000)
        XCTAssertEqual(rawNotes(dump).off, 260, "nothing more at stop")
    }

    func testSigtermAfterTheNoteOnsEndsEveryNoteBeyondTheKernelsPool() throws {
        let dump = try dumpRawMIDI()
        defer { dump.stop() }
        let port = 57342
        let bridge = try startBridge(port: port)
        let start = Date().timeIntervalSince1970
        try sendNotes(port, count: 260, onAt: start + 1.5, offAt: start + 30)
        XCTAssertTrue(dump.waitForOutput(timeout: 60) { _ in self.rawNotes(dump).on >= 260 }, "\(rawNotes(dump))")
        XCTAssertEqual(rawNotes(dump).off, 0)
        let (result, _) = bridge.stop()
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(dump.waitForOutput(timeout: 60) { _ in self.rawNotes(dump).off >= 260 }, "\(rawNotes(dump))")
        usleep(300_000)
        XCTAssertEqual(rawNotes(dump).on, 260)
        XCTAssertEqual(rawNotes(dump).off, 260, "every note that sounded is ended, once")
    }

    func testABundleForSoonPlaysBehindThreeThousandBundlesAnHourAhead() throws {
        let dump = try dumpThrough()
        defer { dump.stop() }
        let port = 57343
        let bridge = try startBridge(port: port)
        let later = Date().timeIntervalSince1970 + 3600
        for index in 0..<3000 {
            try sendBundle(port, at: later, "/midi/thru/1/cc", [.int32(1), .int32(Int32(index % 128))], index: index)
        }
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) { (try? self.status(bridge))?.contains("received   3000 packets") == true },
            (try? status(bridge)) ?? "")
        let sent = Date()
        try sendBundle(port, at: sent.timeIntervalSince1970 + 0.3, "/midi/thru/1/note_on", [.int32(60), .int32(100)], index: 0)
        XCTAssertTrue(dump.waitForOutput(timeout: 60) { _ in self.count("Note on", dump) >= 1 })
        let delay = Date().timeIntervalSince(sent)
        print("a bundle 300 ms ahead behind 3,000 an hour ahead arrived after \(Int(delay * 1000)) ms")
        XCTAssertGreaterThanOrEqual(delay, 0.29)
        XCTAssertLessThan(delay, 1.0)
        XCTAssertEqual(count("Control change", dump), 0)
        let text = try status(bridge)
        print(text)
        XCTAssertTrue(text.contains("dropped none"), text)
        let (result, _) = bridge.stop()
        XCTAssertEqual(result.status, 0, result.standardError)
        usleep(200_000)
        XCTAssertEqual(count("Control change", dump), 0, "nothing of what was still scheduled plays at stop")
    }

    /// The kernel timer interrupts (`LOC`) so far, over every CPU.
    static func timerInterrupts() throws -> Int {
        let text = try String(contentsOfFile: "/proc/interrupts", encoding: .utf8)
        guard let line = text.split(separator: "\n").first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix("LOC:") })
        else { return 0 }
        return line.split(separator: " ").dropFirst().prefix { Int($0) != nil }.compactMap { Int($0) }.reduce(0, +)
    }

    /// Context switches, voluntary and not, of every thread of `pid`.
    static func contextSwitches(_ pid: Int32) throws -> Int {
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        return try tasks.reduce(0) { total, task in
            let status = try String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)
            return total
                + status.split(separator: "\n").filter { $0.contains("ctxt_switches") }
                .compactMap { Int($0.split(separator: "\t").last ?? "") }.reduce(0, +)
        }
    }

    func testTheQueueRunsOnlyWhileABundleIsPendingAndTheDaemonSleepsAfter() throws {
        let dump = try dumpThrough()
        defer { dump.stop() }
        let port = 57344
        let bridge = try startBridge(port: port)
        let queue = { try OSCToMIDIALSATests.timerState(ofQueue: "aseqosc osc") }
        XCTAssertEqual(try queue(), "Stopped")
        for round in 0..<2 {
            try sendBundle(
                port, at: Date().timeIntervalSince1970 + 2, "/midi/thru/1/note_on", [.int32(60), .int32(100)], index: 0)
            XCTAssertTrue(
                RunningBridge.waitUntil(timeout: 1.5) {
                    (try? queue()) == "Running" && self.count("Note on", dump) == round
                }, "round \(round): a bundle is pending, and the queue runs")
            XCTAssertTrue(dump.waitForOutput(timeout: 60) { _ in self.count("Note on", dump) >= round + 1 })
            XCTAssertTrue(RunningBridge.waitUntil(timeout: 60) { (try? queue()) == "Stopped" }, "round \(round)")
        }
        // Idle: no timer of ours, and no thread of the daemon wakes.
        usleep(200_000)
        let interrupts = try Self.timerInterrupts()
        let switches = try Self.contextSwitches(bridge.bridge.pid)
        usleep(2_000_000)
        let interruptsPerSecond = (try Self.timerInterrupts() - interrupts) / 2
        let switchesAfter = try Self.contextSwitches(bridge.bridge.pid) - switches
        print("idle after two bundles: \(interruptsPerSecond) timer interrupts/s, \(switchesAfter) context switches in 2 s")
        XCTAssertLessThanOrEqual(switchesAfter, 2)
        XCTAssertLessThan(interruptsPerSecond, 300, "a running queue fires about 1,000 a second")
        bridge.stop()
    }
}
