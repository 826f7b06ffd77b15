import Config
import Endpoints
import Foundation
import MIDI
import OSC
import ValueStore
import XCTest

@testable import MIDIToOSCRuntime

/// Replays of a destination's last values on the input thread's runner: paced (at most
/// ``RouteRunner/replayBudget`` per destination per turn, after the turn's live events), only
/// for the destinations a request names and that take requests, one request a second.
final class ReplayTests: XCTestCase {
    func runner(_ receivers: [UDPReceiverSocket], sync: [String]) throws -> RouteRunner {
        let destinations = zip(receivers, sync).map { receiver, sync in
            "{ host: \"127.0.0.1\", port: \(receiver.port)\(sync.isEmpty ? "" : ", sync: \(sync)") }"
        }
        let parsed = try ConfigParser.parse(
            Data(
                """
                { inputs: [{ name: "keys" }],
                  routes: [{ name: "faders", destinations: [\(destinations.joined(separator: ", "))] }] }
                """.utf8))
        let store = SysExStore(slots: 4, capacity: 1024)
        let runner = RouteRunner(routes: [])
        let routes = try parsed.routes.map {
            try RouteRuntime(
                config: $0, configInputPorts: [0], portNames: ["keys"], sysexStore: store,
                replaySignal: runner.replaySignal)
        }
        runner.replaceRoutes(routes)
        return runner
    }

    func testAReplayIsPacedAfterLiveEventsAndSendsEachLastValueOnce() throws {
        let receiver = try UDPReceiverSocket()
        let runner = try runner([receiver], sync: ["[\"request\"]"])
        // A batch per channel, so the receiving socket's buffer never overflows.
        for channel: UInt8 in 0..<3 {
            for controller: UInt8 in 0..<100 {
                runner.run(.controlChange(channel: channel, controller: controller, value: 1))
                runner.run(.controlChange(channel: channel, controller: controller, value: controller))
                if controller % 50 == 49 {
                    XCTAssertEqual(runner.endBatch(idleWakeMilliseconds: -1), -1)
                    XCTAssertEqual(try receiver.datagrams().count, 100)
                }
            }
        }

        runner.replaySignal.request(.named("127.0.0.1:\(receiver.port)"))
        runner.run(.noteOn(channel: 0, note: 60, velocity: 100))
        XCTAssertEqual(runner.endBatch(idleWakeMilliseconds: -1), RouteRunner.replayInterval)
        var turn = try receiver.datagrams().map(\.description)
        // The live note first, then one turn's budget.
        XCTAssertEqual(turn.count, 1 + Replays<StoreReplayCursor>.budget)
        XCTAssertEqual(turn.first, "/midi/keys/1/note_on ,ii i:60 i:100")
        var replayed = Array(turn.dropFirst())
        var turns = 1
        while runner.endBatch(idleWakeMilliseconds: -1) == RouteRunner.replayInterval || !turn.isEmpty {
            turn = try receiver.datagrams().map(\.description)
            XCTAssertLessThanOrEqual(turn.count, Replays<StoreReplayCursor>.budget)
            replayed += turn
            turns += 1
            if turns > 100 { break }
        }
        // Bank select first (it comes before a program); data entry and the RPN/NRPN selectors
        // and steps (6, 38, 96-101) are kept as the parameters they set, not as controllers.
        let parameterControllers: Set = [6, 38, 96, 97, 98, 99]
        let order = [0, 32] + (1..<100).filter { $0 != 32 && !parameterControllers.contains($0) }
        let expected = (0..<3).flatMap { channel in order.map { "/midi/keys/\(channel + 1)/cc ,ii i:\($0) i:\($0)" } }
        XCTAssertEqual(replayed, expected)
        XCTAssertEqual(runner.routes[0].replays.stores[0]?.replayed, expected.count)
        // Done: back to waiting for events.
        XCTAssertEqual(runner.endBatch(idleWakeMilliseconds: -1), -1)
    }

    func testARequestReachesOnlyTheDestinationsItNamesThatTakeRequestsOnceASecond() throws {
        let taking = try UDPReceiverSocket()
        let other = try UDPReceiverSocket()
        let runner = try runner([taking, other], sync: ["true", ""])
        runner.run(MIDIEvent(.programChange, channel: 0, data1: 5))
        _ = runner.endBatch(idleWakeMilliseconds: -1)
        XCTAssertEqual(try taking.datagrams().count, 1)
        XCTAssertEqual(try other.datagrams().count, 1)

        // By the route's name: only the destination with `sync`. Then, within the second, by
        // the sender's address: refused and counted; and a name nobody has: nothing.
        runner.replaySignal.request(.named("faders"))
        _ = runner.endBatch(idleWakeMilliseconds: -1)
        runner.replaySignal.request(.from(IPAddress(parsing: "127.0.0.1")!))
        runner.replaySignal.request(.named("nobody"))
        _ = runner.endBatch(idleWakeMilliseconds: -1)
        XCTAssertEqual(try taking.datagrams().map(\.description), ["/midi/keys/1/program ,i i:5"])
        XCTAssertEqual(try other.datagrams().count, 0)
        XCTAssertEqual(runner.replaySignal.refused.load(ordering: .relaxed), 1)
        // A second later, the sender's address is taken.
        usleep(1_000_000)
        runner.replaySignal.request(.from(IPAddress(parsing: "127.0.0.1")!))
        _ = runner.endBatch(idleWakeMilliseconds: -1)
        XCTAssertEqual(try taking.datagrams().map(\.description), ["/midi/keys/1/program ,i i:5"])
    }
}
