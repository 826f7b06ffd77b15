import Foundation
import Testing

@testable import MIDIToOSCRuntime
@testable import OSCToMIDIRuntime
@testable import Recovery
@testable import Status

/// The OSC input's part of `aseqosc status`: separate JSON fields for scripts, and aligned lines
/// for people.
@Suite struct BridgeStatusTests {
    static let oscInput = BridgeStatus.OSCInput(
        listen: "osc.udp://127.0.0.1:57120", packets: 12, bytes: 480, messages: 14, translated: 11,
        malformed: ["oversized": 1, "unterminatedString": 2, "argumentsDoNotFit": 3], unknownAddresses: 4,
        notAllowed: 5, scheduled: 6, late: 7, sysexDisabled: 8, sysexDropped: 9,
        outputs: [
            BridgeStatus.OSCOutputPort(
                name: "synth", sent: 10, droppedQueueFull: 11, droppedRedundantNoteOffs: 12, droppedNoteOffs: 0,
                reservedNoteOffs: 13, droppedAtStop: 14, failed: 15, queueHighWater: 16, queueCapacity: 1024)
        ])

    @Test func oscInputCountersAreSeparateJSONFields() throws {
        let data = try JSONEncoder().encode(Self.oscInput)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["packets"] as? Int == 12)
        #expect(object["bytes"] as? Int == 480)
        #expect(object["notAllowed"] as? Int == 5)
        #expect(
            object["malformed"] as? [String: Int] == ["oversized": 1, "unterminatedString": 2, "argumentsDoNotFit": 3])
        let output = try #require((object["outputs"] as? [[String: Any]])?.first)
        #expect(output["name"] as? String == "synth")
        #expect(output["droppedQueueFull"] as? Int == 11)
        #expect(output["queueHighWater"] as? Int == 16)
        #expect(try JSONDecoder().decode(BridgeStatus.OSCInput.self, from: data) == Self.oscInput)
    }

    @Test func oscInputLinesAlignTheirCounters() {
        let lines = Self.oscInput.lines
        #expect(lines.first == "osc input osc.udp://127.0.0.1:57120:")
        #expect(lines.contains("  received   12 packets, 480 bytes, 14 messages, 11 translated"))
        #expect(lines.contains("  malformed  argumentsDoNotFit 3, oversized 1, unterminatedString 2"))
        #expect(
            lines.contains { $0.hasPrefix("  -> synth   10 sent, queue 16/1024 high water, dropped 11 queue full") })
        // Every counter starts in the same column, after the widest label ("malformed") and two spaces.
        for line in lines.dropFirst() {
            let characters = Array(line)
            #expect(characters[12] == " " && characters[13] != " ", "\(line)")
        }
    }

    @Test func shutdownSummaryKeepsItsWording() {
        let summary = Self.oscInput.summary
        #expect(summary.hasPrefix("12 datagrams, 480 bytes, 14 messages, 11 translated, 10 MIDI events sent"))
        #expect(summary.contains("6 bundles scheduled, 7 late; dropped: 5 not allowed, 3 malformed packets"))
        #expect(summary.contains("3 malformed messages, 4 unknown addresses"))
    }

    @Test func tcpCountersAreAFieldARowAndPartOfTheSummary() throws {
        var input = Self.oscInput
        input.listen = "osc.udp://127.0.0.1:57120 and osc.tcp://127.0.0.1:57120"
        input.tcp = BridgeStatus.OSCTCPInput(
            packets: 7, bytes: 280, accepted: 5, open: 1, closed: 4, refusedNotAllowed: 2, refusedTooMany: 3,
            evictedIdle: 6, partialFrameTimeouts: 8, framingErrors: ["oversized": 1, "badEscape": 2])
        let data = try JSONEncoder().encode(input)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let tcp = try #require(object["tcp"] as? [String: Any])
        #expect(tcp["accepted"] as? Int == 5 && tcp["refusedTooMany"] as? Int == 3)
        #expect(tcp["evictedIdle"] as? Int == 6 && tcp["partialFrameTimeouts"] as? Int == 8)
        #expect(tcp["framingErrors"] as? [String: Int] == ["oversized": 1, "badEscape": 2])
        #expect(try JSONDecoder().decode(BridgeStatus.OSCInput.self, from: data) == input)
        #expect(
            input.lines.contains(
                "  TCP        7 packets, 280 bytes; connections 5 accepted, 1 open, 4 closed, refused 2 not allowed, "
                    + "3 too many; closed 6 idle to make room, 8 partial frame timeouts; "
                    + "framing errors: badEscape 2, oversized 1"))
        #expect(input.summary.hasPrefix("12 packets, 480 bytes"))
        #expect(
            input.summary.hasSuffix(
                "; TCP 7 packets, 280 bytes; connections 5 accepted, 1 open, 4 closed, "
                    + "refused 2 not allowed, 3 too many; closed 6 idle to make room, 8 partial frame timeouts; "
                    + "framing errors: badEscape 2, oversized 1"))
        // A status from a version without TCP decodes, without it.
        var old = object
        old["tcp"] = nil
        let decoded = try JSONDecoder().decode(
            BridgeStatus.OSCInput.self, from: try JSONSerialization.data(withJSONObject: old))
        #expect(decoded.tcp == nil)
    }
}
