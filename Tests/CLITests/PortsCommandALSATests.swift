import Foundation
import TestSupport
import XCTest

/// `aseqosc ports` against the kernel sequencer (run in the ALSA VM by scripts/test).
final class PortsCommandALSATests: XCTestCase {
    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
    }

    func testTableListsMidiThroughAndVirtualRawMIDI() throws {
        let result = try runProcess(TestEnvironment.aseqoscBinary, ["ports"])
        XCTAssertEqual(result.status, 0, result.standardError)
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.first?.hasPrefix("PORT     DIR     TYPE") ?? false)
        let through = try XCTUnwrap(lines.first { $0.hasPrefix("14:0 ") })
        XCTAssertTrue(through.contains("in/out  software  Midi Through"), through)
        XCTAssertTrue(through.hasSuffix("Midi Through Port-0"), through)
        let virmidi = lines.filter { $0.contains("Virtual Raw MIDI") }
        XCTAssertGreaterThanOrEqual(virmidi.count, 1, result.standardOutput)
        XCTAssertTrue(virmidi.allSatisfy { $0.contains("hardware") }, result.standardOutput)
    }

    func testJSONListsTheSamePortsAsAconnect() throws {
        let result = try runProcess(TestEnvironment.aseqoscBinary, ["ports", "--json"])
        XCTAssertEqual(result.status, 0, result.standardError)
        let entries = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]])
        let addresses = Set(entries.compactMap { $0["address"] as? String })

        // aconnect -l prints "client N: 'name'" then indented "P 'port name'" lines.
        let aconnect = try TestEnvironment.tool("aconnect", package: "alsa-utils")
        var peerAddresses = Set<String>()
        var client = ""
        for line in try runProcess(aconnect, ["-l"]).standardOutput.split(separator: "\n") {
            if line.hasPrefix("client ") {
                client = String(line.dropFirst(7).prefix { $0 != ":" })
            } else if line.hasPrefix("    "), let port = line.split(separator: " ").first, Int(port) != nil {
                peerAddresses.insert("\(client):\(port)")
            }
        }
        XCTAssertFalse(peerAddresses.isEmpty)
        XCTAssertTrue(peerAddresses.isSubset(of: addresses), "\(peerAddresses) vs \(addresses)")
        let through = try XCTUnwrap(entries.first { $0["address"] as? String == "14:0" })
        XCTAssertEqual(through["clientName"] as? String, "Midi Through")
        XCTAssertEqual(through["direction"] as? String, "in/out")
    }
}
