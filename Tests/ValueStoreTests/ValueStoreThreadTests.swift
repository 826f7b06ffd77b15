import Foundation
import MIDI
import ValueStore
import XCTest

/// One writer and a reader on another thread, as the OSC thread and the OSCQuery server will
/// be: the reader only ever sees values the writer wrote, and every last change is reported.
final class ValueStoreThreadTests: XCTestCase {
    func testAReaderOnAnotherThreadSeesOnlyWrittenValuesAndTheLastOfEach() {
        let table = PortValues(port: 0)
        let rounds = 200_000
        let done = DispatchSemaphore(value: 0)
        let writer = Thread {
            // Controller 1 counts up on channel 0; its 14-bit twin on channel 1 holds the
            // same count in both halves, so a torn value would show as halves that differ.
            var i = 0
            while i < rounds {
                let value = UInt8(i % 128)
                table.record(.controlChange(channel: 0, controller: 1, value: value))
                table.record(
                    MIDIEvent(.controlChange14, channel: 1, value: Int32(value) << 7 | Int32(value), parameter: 1))
                i += 1
            }
            done.signal()
        }
        writer.start()

        var bad = 0
        var seen = 0
        var finished = false
        while !finished {
            finished = done.wait(timeout: .now()) == .success
            table.takeChanges { slot in
                guard let event = table.event(at: slot) else {
                    bad += 1
                    return
                }
                seen += 1
                if event.kind == .controlChange14 && event.value >> 7 != event.value & 127 { bad += 1 }
                if event.kind == .controlChange && event.data2 > 127 { bad += 1 }
            }
        }
        table.takeChanges { _ in seen += 1 }

        XCTAssertEqual(bad, 0)
        XCTAssertGreaterThan(seen, 0)
        let last = UInt8((rounds - 1) % 128)
        XCTAssertEqual(table.event(at: .controller(1, channel: 0))?.data2, last)
        XCTAssertEqual(table.event(at: .controller14(1, channel: 1))?.value, Int32(last) << 7 | Int32(last))
    }
}
