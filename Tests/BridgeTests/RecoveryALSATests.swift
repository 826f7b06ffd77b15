import Foundation
import Glibc
import OSC
import TestSupport
import XCTest

/// Note recovery (docs/OSC.md, "Recovery") against the kernel sequencer: `/aseqosc/held`
/// messages end at the OSC input what a lost note-off left sounding, a silent sender has its
/// notes ended, and two bridges over a loopback that loses 10% of its packets (netem) end with
/// nothing sounding, where the same notes without recovery leave notes stuck. The witness is
/// `aseqdump` on Midi Through, where the receiving bridge's output goes.
final class RecoveryALSATests: XCTestCase {
    var stdbuf = ""
    var aseqdump = ""

    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
        stdbuf = try TestEnvironment.tool("stdbuf", package: "coreutils")
        aseqdump = try TestEnvironment.tool("aseqdump", package: "alsa-utils")
    }

    /// `aseqdump` on Midi Through (14:0), once it is listening.
    func dumpMidiThrough() throws -> BackgroundProcess {
        let dump = BackgroundProcess(stdbuf, ["-oL", aseqdump, "-p", "14:0"])
        try dump.start()
        XCTAssertTrue(dump.waitForOutput { $0.contains("Source") })
        return dump
    }

    /// A receiving bridge: OSC on `port`, output "thru" to Midi Through.
    func startReceiver(port: Int) throws -> RunningBridge {
        try RunningBridge(
            config: #"{ outputs: [{ name: "thru", to: "Midi Through" }], osc: { listen: "127.0.0.1:\#(port)" } }"#,
            oscPorts: [])
    }

    /// The notes sounding per channel (0-based) after the note events `aseqdump` printed.
    static func sounding(_ dump: String) -> [Int: Set<Int>] {
        var sounding: [Int: Set<Int>] = [:]
        for line in dump.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
            guard let kind = fields.firstIndex(of: "Note"), kind + 4 < fields.count,
                let channel = Int(fields[kind + 2]), let note = Int(fields[kind + 4])
            else { continue }
            let velocity = fields.firstIndex(of: "velocity").flatMap { Int(fields[$0 + 1]) } ?? 0
            if fields[kind + 1] == "on" && velocity > 0 {
                sounding[channel, default: []].insert(note)
            } else if fields[kind + 1] == "on" || fields[kind + 1] == "off" {
                sounding[channel, default: []].remove(note)
            }
        }
        return sounding
    }

    /// The notes on `channel` (0-based) that were stuck: still sounding when played again, or at
    /// the end. A note played again hides a stuck one from ``sounding(_:)``, not from this.
    static func stuck(_ dump: String, channel: Int) -> Int {
        var sounding = Set<Int>()
        var stuck = 0
        for line in dump.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
            guard let kind = fields.firstIndex(of: "Note"), kind + 4 < fields.count,
                Int(fields[kind + 2]) == channel, let note = Int(fields[kind + 4])
            else { continue }
            let velocity = fields.firstIndex(of: "velocity").flatMap { Int(fields[$0 + 1]) } ?? 0
            if fields[kind + 1] == "on" && velocity > 0 {
                if !sounding.insert(note).inserted { stuck += 1 }
            } else {
                sounding.remove(note)
            }
        }
        return stuck + sounding.count
    }

    /// How many note-ons `aseqdump` printed on `channel` (0-based).
    static func noteOns(_ dump: String, channel: Int) -> Int {
        dump.split(separator: "\n").filter { line in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "," })
            guard let kind = fields.firstIndex(of: "Note"), kind + 2 < fields.count else { return false }
            return fields[kind + 1] == "on" && fields[kind + 2] == "\(channel)"
        }.count
    }

    func held(channel: Int, _ notes: [Int32]) throws -> [UInt8] {
        try OSCPacket.message(
            OSCMessage("/aseqosc/held", [.int32(500), .int32(Int32(channel))] + notes.map { .int32($0) })
        ).serialize()
    }

    func note(_ kind: String, channel: Int, _ note: Int32, _ velocity: Int32) throws -> [UInt8] {
        try OSCPacket.message(OSCMessage("/midi/thru/\(channel)/\(kind)", [.int32(note), .int32(velocity)]))
            .serialize()
    }

    func statusJSON(_ bridge: RunningBridge) throws -> [String: Any] {
        let json = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--json", "--control", bridge.controlPath])
        XCTAssertEqual(json.status, 0, json.standardError)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
    }

    func testAHeldNotesMessageEndsWhatALostNoteOffLeftAndASilentSenderHasItsNotesEnded() throws {
        let dump = try dumpMidiThrough()
        defer { dump.stop() }
        let bridge = try startReceiver(port: 57411)
        let sender = UDPPeer()
        sender.send(try held(channel: 1, []), toLoopbackPort: 57411)
        sender.send(try note("note_on", channel: 1, 60, 100), toLoopbackPort: 57411)
        sender.send(try note("note_on", channel: 1, 64, 100), toLoopbackPort: 57411)
        // Another sender's note, never followed: recovery must leave it alone.
        XCTAssertGreaterThan(sendUDPDatagram(try note("note_on", channel: 2, 67, 90), toLoopbackPort: 57411), 0)
        XCTAssertTrue(
            dump.waitForOutput { Self.sounding($0)[0] == [60, 64] && Self.sounding($0)[1] == [67] },
            dump.standardOutput)
        // The note-off of 60 is "lost"; the sender now holds only 64. A message within the
        // receiver's grace (30 ms) of a note-on could have overtaken it, so this one waits it out.
        usleep(50_000)
        // The sender's last message: its silence is timed from here.
        let lastMessage = Date()
        sender.send(try held(channel: 1, [64]), toLoopbackPort: 57411)
        XCTAssertTrue(dump.waitForOutput { Self.sounding($0)[0] == [64] }, dump.standardOutput)

        let status = try statusJSON(bridge)
        let recovery = try XCTUnwrap((status["oscInput"] as? [String: Any])?["recovery"] as? [String: Any])
        // A status is a process, which on a busy machine may start after the sender's second of
        // silence has ended its following: followed it was, either way, and a silent release
        // comes only with that end.
        XCTAssertEqual(Self.followed(recovery), 1, "\(recovery)")
        XCTAssertEqual(recovery["messages"] as? Int, 2)
        XCTAssertEqual(recovery["repaired"] as? Int, 1)
        XCTAssertEqual(recovery["releasedSilent"] as? Int, recovery["sendersLost"] as? Int, "\(recovery)")

        // Then the sender falls silent: after twice its period (500 ms) its note ends too, and
        // only its note: the other sender's stays.
        XCTAssertTrue(dump.waitForOutput(timeout: 60) { Self.sounding($0)[0] == [] }, dump.standardOutput)
        let silentFor = Date().timeIntervalSince(lastMessage)
        XCTAssertGreaterThan(silentFor, 0.9, "released before the sender had been silent for two periods")
        XCTAssertLessThan(silentFor, 2.5)
        XCTAssertEqual(Self.sounding(dump.standardOutput)[1], [67])
        let after = try XCTUnwrap((try statusJSON(bridge)["oscInput"] as? [String: Any])?["recovery"] as? [String: Any])
        XCTAssertEqual(after["releasedSilent"] as? Int, 1)
        XCTAssertEqual(after["sendersLost"] as? Int, 1)
        XCTAssertEqual(after["senders"] as? Int, 0)

        // Malformed held messages are counted, not followed.
        sender.send(
            try OSCPacket.message(OSCMessage("/aseqosc/held", [.int32(500), .int32(17)])).serialize(),
            toLoopbackPort: 57411)
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                usleep(100_000)  // a status is a process; no need to ask more often
                let recovery = ((try? self.statusJSON(bridge))?["oscInput"] as? [String: Any])?["recovery"]
                return (recovery as? [String: Any])?["malformed"] as? Int == 1
            })
        let text = try runProcess(TestEnvironment.aseqoscBinary, ["status", "--control", bridge.controlPath])
        XCTAssertTrue(
            text.standardOutput.contains(
                "recovery   0 senders followed, 2 held-notes messages (1 malformed); note-offs: 1 repaired, "
                    + "1 for 1 senders gone silent"), text.standardOutput)
    }

    /// A sender whose first held-notes message was lost (it plays before the receiver follows
    /// it): the notes it played in the meantime are its own all the same, so its next message
    /// ends the one whose note-off was lost too. Another sender's note on the same channel stays.
    func testANotePlayedBeforeASendersFirstHeldMessageIsRepairedByIt() throws {
        let dump = try dumpMidiThrough()
        defer { dump.stop() }
        let bridge = try startReceiver(port: 57413)
        let sender = UDPPeer()
        sender.send(try note("note_on", channel: 1, 60, 100), toLoopbackPort: 57413)
        sender.send(try note("note_on", channel: 1, 62, 100), toLoopbackPort: 57413)
        sender.send(try note("note_off", channel: 1, 62, 0), toLoopbackPort: 57413)
        XCTAssertGreaterThan(sendUDPDatagram(try note("note_on", channel: 1, 67, 90), toLoopbackPort: 57413), 0)
        XCTAssertTrue(
            dump.waitForOutput { Self.sounding($0)[0] == [60, 67] && $0.contains("Note off") }, dump.standardOutput)
        // Past the receiver's grace (30 ms) for the note-on, as in the first test.
        usleep(50_000)
        sender.send(try held(channel: 1, []), toLoopbackPort: 57413)
        XCTAssertTrue(dump.waitForOutput { Self.sounding($0)[0] == [67] }, dump.standardOutput)
        let recovery = try XCTUnwrap(
            (try statusJSON(bridge)["oscInput"] as? [String: Any])?["recovery"] as? [String: Any])
        XCTAssertEqual(Self.followed(recovery), 1, "\(recovery)")
        XCTAssertEqual(recovery["repaired"] as? Int, 1)
    }

    /// The senders a receiver follows or has followed until they fell silent: `status --json`'s
    /// `senders` and `sendersLost`.
    static func followed(_ recovery: [String: Any]) -> Int? {
        guard let now = recovery["senders"] as? Int, let lost = recovery["sendersLost"] as? Int else { return nil }
        return now + lost
    }

    /// 200 notes played into bridge A (its input named as B's output, so that the default
    /// scheme's `/midi/thru/...` addresses reach it), which sends them to bridge B twice over a loopback that
    /// loses 10% of its packets: on channel 1 with `recovery: true`, and moved to channel 2 by a
    /// second route without it. B's output ends with nothing sounding on channel 1; channel 2
    /// keeps notes stuck, so the loss was real.
    func testTwoBridgesOverALossyLinkEndWithNothingSoundingWhereRecoveryIsOn() throws {
        guard geteuid() == 0 else { throw XCTSkip("netem needs root (the ALSA VM runs as root)") }
        let tc = try TestEnvironment.tool("tc", package: "iproute2")
        let loss = try runProcess(tc, ["qdisc", "add", "dev", "lo", "root", "netem", "loss", "10%"])
        XCTAssertEqual(
            loss.status, 0,
            "tc netem: \(loss.standardError) (the VM needs ALSA_VM_MODULES=sch_netem, as scripts/test sets)")
        guard loss.status == 0 else { return }
        defer { _ = try? runProcess(tc, ["qdisc", "del", "dev", "lo", "root"]) }

        let dump = try dumpMidiThrough()
        defer { dump.stop() }
        let receiver = try startReceiver(port: 57412)
        let player = try RunningBridge(
            config: """
                { client: "recovery-a", inputs: [{ name: "thru" }],
                  routes: [
                    { name: "healed", destinations: [{ host: "127.0.0.1", port: 57412, recovery: true }] },
                    { name: "plain", operators: [{ channelMap: { "1": 2 } }],
                      destinations: [{ host: "127.0.0.1", port: 57412 }] },
                  ] }
                """, oscPorts: [])
        let script = directoryFile("notes.txt")
        let notes = (0..<200).map { 48 + ($0 * 7) % 25 }
        try notes.map { "on \($0) 100 +00.030 off \($0) +00.020" }.joined(separator: "\n")
            .write(toFile: script, atomically: true, encoding: .utf8)
        let played = try runProcess(TestEnvironment.aseqoscBinary, ["send", "--to", "recovery-a:thru", "file", script])
        XCTAssertEqual(played.status, 0, played.standardError)

        // A has gone quiet (its last held-notes messages leave a second after the last note-off)
        // once B stops following it, a second after that: then everything A sent is in.
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                usleep(100_000)  // a status is a process; no need to ask more often
                let recovery = ((try? self.statusJSON(receiver))?["oscInput"] as? [String: Any])?["recovery"]
                return (recovery as? [String: Any])?["sendersLost"] as? Int == 1
            }, "B did not stop following A")
        let text = dump.standardOutput
        XCTAssertEqual(Self.sounding(text)[0, default: []], [], "still sounding with recovery")
        XCTAssertEqual(Self.stuck(text, channel: 0), 0, "notes stuck with recovery")
        // About 9% of the notes lose their note-off (and not their note-on) at 10% loss.
        XCTAssertGreaterThan(Self.stuck(text, channel: 1), 0, "no note stuck without recovery: the link lost nothing?")
        XCTAssertGreaterThan(Self.noteOns(text, channel: 0), 150, "most note-ons should cross a 10% loss")
        let status = try statusJSON(receiver)
        let recovery = try XCTUnwrap((status["oscInput"] as? [String: Any])?["recovery"] as? [String: Any])
        XCTAssertGreaterThan(recovery["repaired"] as? Int ?? 0, 0)
        player.stop()
        receiver.stop()
    }

    /// `sync: ["recovery"]`: a controller moved while the receiving bridge was down reaches it
    /// when the sender's next phase opens (the receiver hears it anew and asks with
    /// `/aseqosc/sync`); after a phase the sender ended cleanly, the next one replays nothing.
    func testAReceiverThatHearsASenderAnewGetsTheControllersItMissed() throws {
        let dump = try dumpMidiThrough()
        defer { dump.stop() }
        let player = try RunningBridge(
            config: """
                { client: "recovery-s", inputs: [{ name: "thru" }],
                  routes: [{ destinations: [{ host: "127.0.0.1", port: 57414, recovery: true, sync: ["recovery"] }] }] }
                """, oscPorts: [])
        defer { player.stop() }
        func send(_ words: [String]) throws {
            let sent = try runProcess(TestEnvironment.aseqoscBinary, ["send", "--to", "recovery-s:thru"] + words)
            XCTAssertEqual(sent.status, 0, sent.standardError)
        }
        // Nobody listens yet: the controller is lost on the way, kept in the sender's store.
        try send(["cc", "7", "100"])
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                let routes = (try? self.statusJSON(player))?["routes"] as? [[String: Any]]
                let destination = (routes?.first?["destinations"] as? [[String: Any]])?.first
                return destination?["packetsSent"] as? Int ?? 0 >= 1
            }, "the controller was not sent")
        let receiver = try startReceiver(port: 57414)
        defer { receiver.stop() }
        let controller = "Control change          0, controller 7, value 100"
        let played = Date()
        try send(["on", "60", "100", "off", "60"])
        XCTAssertTrue(dump.waitForOutput(timeout: 60) { $0.contains(controller) }, dump.standardOutput)
        // For the log: how long the replayed controller took, `aseqosc send` starting included.
        print("recovery replay: controller at aseqdump \(Int(Date().timeIntervalSince(played) * 1000)) ms after the note was sent")
        XCTAssertTrue(dump.standardOutput.contains("Note on                 0, note 60, velocity 100"))
        let recovery = { () -> [String: Any]? in
            ((try? self.statusJSON(receiver))?["oscInput"] as? [String: Any])?["recovery"] as? [String: Any]
        }
        XCTAssertEqual(recovery()?["sendersAsked"] as? Int, 1)

        // The phase ends cleanly; the next one is not a return: nothing is replayed.
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                usleep(100_000)
                return recovery()?["sendersLost"] as? Int == 1
            }, "the receiver did not stop following the sender")
        try send(["on", "62", "100", "off", "62"])
        XCTAssertTrue(
            RunningBridge.waitUntil(timeout: 60) {
                usleep(100_000)
                return recovery()?["sendersLost"] as? Int == 2
            }, "the second phase did not end")
        let text = dump.standardOutput
        XCTAssertTrue(text.contains("Note on                 0, note 62, velocity 100"), text)
        XCTAssertEqual(text.components(separatedBy: controller).count - 1, 1, text)
        XCTAssertEqual(recovery()?["sendersAsked"] as? Int, 1)
    }

    private func directoryFile(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("aseqosc-\(UUID().uuidString)-\(name)").path
    }
}
