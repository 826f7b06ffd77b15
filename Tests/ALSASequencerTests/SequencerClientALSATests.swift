import ALSASequencer
import Endpoints
import Foundation
import TestSupport
import XCTest

/// The sequencer client against the kernel's sequencer (run in the ALSA VM by scripts/test).
final class SequencerClientALSATests: XCTestCase {
    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
    }

    func testKernelClientsOfTheVMAreListed() throws {
        let ports = try SequencerClient(name: "aseqosc-test").ports()
        let through = try XCTUnwrap(ports.first { $0.clientName == "Midi Through" })
        XCTAssertEqual(through.address, PortAddress(client: 14, port: 0))
        XCTAssertEqual(through.portName, "Midi Through Port-0")
        XCTAssertEqual(through.direction, "in/out")
        XCTAssertEqual(through.kind, "software")
        let virmidi = ports.filter { $0.clientName.hasPrefix("Virtual Raw MIDI") }
        XCTAssertFalse(virmidi.isEmpty)
        XCTAssertTrue(virmidi.allSatisfy { $0.isHardware && $0.capabilities.isSource })
        XCTAssertTrue(ports.contains { $0.address == .systemAnnounce })
    }

    func testCreatedPortIsListedThenGoneAfterDelete() throws {
        let client = try SequencerClient(name: "aseqosc-port-test")
        let input = try client.createPort(name: "keys in", direction: .input)
        let output = try client.createPort(name: "synth out", direction: .output)

        let listed = try client.ports().filter { $0.address.client == client.clientID }
        XCTAssertEqual(listed.map(\.portName), ["keys in", "synth out"])
        XCTAssertEqual(listed.map(\.clientName), ["aseqosc-port-test", "aseqosc-port-test"])
        XCTAssertEqual(listed.map(\.direction), ["out", "in"])

        // A second client sees the same ports: they are in the kernel, not in our process.
        let observer = try SequencerClient(name: "aseqosc-observer")
        XCTAssertTrue(try observer.ports().contains { $0.address == PortAddress(client: client.clientID, port: input) })

        try client.deletePort(input)
        let after = try observer.ports().filter { $0.address.client == client.clientID }
        XCTAssertEqual(after.map(\.address.port), [output])
    }

    func testSubscriptionsShowInAconnect() throws {
        let aconnect = try TestEnvironment.tool("aconnect", package: "alsa-utils")
        let client = try SequencerClient(name: "aseqosc-subs")
        let input = try client.createPort(name: "in", direction: .input)
        let output = try client.createPort(name: "out", direction: .output)
        let through = PortAddress(client: 14, port: 0)
        try client.connect(from: through, to: input)
        try client.connect(from: output, to: through)

        let listing = try runProcess(aconnect, ["-l"]).standardOutput
        XCTAssertTrue(listing.contains("Connecting To: \(client.clientID):\(input)"), listing)
        XCTAssertTrue(listing.contains("Connected From: \(client.clientID):\(output)"), listing)

        try client.disconnect(from: through, to: input)
        try client.disconnect(from: output, to: through)
        let after = try runProcess(aconnect, ["-l"]).standardOutput
        XCTAssertFalse(after.contains("\(client.clientID):\(input)"), after)
    }

    func testDeletingAPortTwiceReportsTheFailedCall() throws {
        let client = try SequencerClient(name: "aseqosc-errors")
        let port = try client.createPort(name: "once", direction: .input)
        try client.deletePort(port)
        XCTAssertThrowsError(try client.deletePort(port)) { error in
            XCTAssertEqual((error as? ALSAError)?.call, "snd_seq_delete_simple_port")
        }
    }
}
