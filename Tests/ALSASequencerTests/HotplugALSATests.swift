import ALSASequencer
import Foundation
import MIDI
import TestSupport
import XCTest

/// A named source disappears and comes back (with a new client number) many times: the monitor
/// binds it again every time by name and shows the note-offs owed for notes held at each loss.
final class HotplugALSATests: XCTestCase {
    override func setUpWithError() throws {
        try TestEnvironment.requireSequencer()
    }

    func testNamedSourceIsReboundTwentyTimesAndHeldNotesAreReleased() throws {
        let monitor = BackgroundProcess(TestEnvironment.aseqoscBinary, ["monitor", "--json", "HotplugKeys"])
        try monitor.start()
        defer { monitor.stop() }
        XCTAssertTrue(
            waitUntil { monitor.standardError.contains("'HotplugKeys' is waiting") }, monitor.standardError)

        var addresses: Set<UInt8> = []
        var spacer: SequencerClient?
        for cycle in 0..<20 {
            // Another client between two lives of the keyboard moves it to a new client number.
            spacer = cycle % 2 == 0 ? try SequencerClient(name: "spacer") : nil
            let keys = try SequencerClient(name: "HotplugKeys")
            addresses.insert(keys.clientID)
            let port = try keys.createPort(name: "keys out", direction: .output)
            let boundCount = cycle + 1
            XCTAssertTrue(
                waitUntil { monitor.standardError.components(separatedBy: "bound to").count - 1 >= boundCount },
                "cycle \(cycle): not rebound: \(monitor.standardError)")
            try keys.send(.noteOn(channel: 0, note: UInt8(40 + cycle), velocity: 90), from: port)
            try keys.send(.noteOn(channel: 3, note: 100, velocity: 1), from: port)
            XCTAssertTrue(
                waitUntil { monitor.standardOutput.components(separatedBy: "note_on").count - 1 >= 2 * boundCount })
            _ = keys  // the client closes here, unplugging its port while both notes are held
        }
        _ = spacer
        XCTAssertTrue(waitUntil { monitor.standardOutput.components(separatedBy: "note_off").count - 1 >= 40 })

        let lines = monitor.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let noteOffs = lines.filter { $0["type"] as? String == "note_off" }
        XCTAssertEqual(noteOffs.count, 40)
        for cycle in 0..<20 {
            XCTAssertTrue(noteOffs.contains { $0["note"] as? Int == 40 + cycle && $0["channel"] as? Int == 1 })
        }
        XCTAssertEqual(noteOffs.filter { $0["note"] as? Int == 100 && $0["channel"] as? Int == 4 }.count, 20)
        XCTAssertGreaterThan(addresses.count, 1, "the keyboard never changed client number")
        XCTAssertEqual(monitor.standardError.components(separatedBy: "lost").count - 1, 20, monitor.standardError)
    }

}
