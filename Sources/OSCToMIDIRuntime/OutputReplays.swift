import ALSASequencer
import Config
import Synchronization
import ValueStore

/// The output ports' replays of their last values (`sync`, docs/CONFIG.md "Replay"): asked for
/// when a port's device comes back, by `/aseqosc/sync ,s NAME` and by the status page, and run
/// on the OSC thread, ``Replays/budget`` values a turn to a port only while it holds nothing
/// back, so a live event never waits behind them.
package final class OutputReplays: Sendable {
    private let names: [String]
    private let sync: [SyncTriggers]
    private let replays: Replays<ReplayCursor>
    /// `/aseqosc/sync` messages read.
    package let requests = Atomic<Int>(0)
    /// Requests for an output whose replay started less than a second before.
    package let refused = Atomic<Int>(0)

    /// The replays of `outputs`, as their `sync` asks.
    package init(outputs: [OutputPortConfig]) {
        names = outputs.map(\.name)
        sync = outputs.map(\.sync)
        replays = Replays(targets: outputs.count)
    }

    /// Whether a device coming back can ask for a replay: the OSC thread must then be wakeable.
    var followsDevices: Bool { sync.contains { $0.contains(.device) } }

    /// Whether a replay is under way or asked for (the OSC thread's view).
    @inline(__always)
    var hasWork: Bool { replays.hasWork }

    /// Asks for output `index`'s replay if its `sync` has `device` (any thread); true: the
    /// caller wakes the OSC thread.
    func deviceReturned(output index: Int) -> Bool {
        guard index < sync.count, sync[index].contains(.device) else { return false }
        replays.want(index)
        return true
    }

    /// Asks for the replay of every output that has `sync`, whatever its triggers (the status
    /// page's action; any thread); returns how many, which the caller wakes the OSC thread for.
    func replayAll() -> Int {
        var count = 0
        for index in sync.indices where !sync[index].isEmpty {
            replays.want(index)
            count += 1
        }
        return count
    }

    /// `/aseqosc/sync ,s NAME` at `now`: replays the outputs of that name with `sync:
    /// ["request"]`, one request a second each. The OSC thread.
    func requested(name: String, now: UInt64) {
        for index in names.indices where names[index] == name && sync[index].contains(.request) {
            if !replays.request(index, now: now) { refused.add(1, ordering: .relaxed) }
        }
    }

    /// Sends the next values of each replay under way to its port, if it holds nothing back;
    /// returns whether one is still under way. The OSC thread, after the turn's live events.
    func run(into output: PacedMIDIOutput<SequencerPortWriter>, from values: LastValueStore, now: UInt64) -> Bool {
        replays.run { index, cursor in
            guard output.isQuiet(port: index) else { return .goesOn }
            let sent = values[index].replay(&cursor, limit: Replays<ReplayCursor>.budget) { output.send($0, now: now) }
            values.replayedCount.add(sent, ordering: .relaxed)
            return cursor.isFinished ? .finished : .goesOn
        }
    }
}
