import Storage
import Synchronization

/// Where a replay has got to, started afresh by `init()`: ``ReplayCursor`` for one port,
/// ``StoreReplayCursor`` for a whole store.
package protocol ReplayPosition {
    init()
}

extension ReplayCursor: ReplayPosition {}
extension StoreReplayCursor: ReplayPosition {}

/// The replays of last values one thread runs for its targets (a route's destinations, the
/// OSC input's output ports), paced alike in both directions: at most ``budget`` values per
/// target per turn, after the turn's live events, a turn every ``interval`` while one is under
/// way, and an `/aseqosc/sync` taken by a target at most once per ``requestInterval``.
///
/// Any thread may ask for a target's replay (``want(_:)``, then wake the owner); the owner's
/// thread starts it at its next turn (``run(_:)``), from the top again if one was under way.
package final class Replays<Position: ReplayPosition>: @unchecked Sendable {
    // @unchecked Sendable: the flags are atomic; the positions and request times are the
    // owner's thread's alone.

    /// Values a replay sends a target per turn: with ``interval``, 6,400 a second, the 4,736
    /// slots of a port in under a second, never more than a synth takes.
    package static var budget: Int { 32 }
    /// How often a turn comes while a replay is under way (ns).
    package static var interval: UInt64 { 5_000_000 }
    /// How often a target takes an `/aseqosc/sync` (ns): a client asking in a loop cannot keep
    /// a synth's panel resetting.
    static var requestInterval: UInt64 { 1_000_000_000 }

    private let wanted: FixedBuffer<Atomic<Bool>>
    private let raised = Atomic<Bool>(false)
    private var positions: [Position?]
    private var lastRequest: [UInt64]
    /// Whether a replay is under way (the owner's view after its last ``run(_:)``).
    private(set) var underWay = false

    /// No replay yet for any of `targets` targets.
    package init(targets: Int) {
        wanted = FixedBuffer(count: max(targets, 1)) { _ in Atomic<Bool>(false) }
        positions = Array(repeating: nil, count: targets)
        lastRequest = Array(repeating: 0, count: targets)
    }

    /// Asks for `target`'s replay from the top at the owner's next turn (any thread; the
    /// caller then wakes the owner).
    package func want(_ target: Int) {
        guard target < positions.count else { return }
        wanted[target].store(true, ordering: .releasing)
        raised.store(true, ordering: .releasing)
    }

    /// Whether the owner has replay work: one under way, or one asked for since it last looked.
    @inline(__always)
    package var hasWork: Bool { underWay || raised.load(ordering: .relaxed) }

    /// An `/aseqosc/sync` for `target` at `now`: its replay starts at the next turn unless it
    /// took one less than ``requestInterval`` before; false: refused. The owner's thread.
    package func request(_ target: Int, now: UInt64) -> Bool {
        guard target < positions.count,
            lastRequest[target] == 0 || now &- lastRequest[target] >= Self.requestInterval
        else { return false }
        lastRequest[target] = now
        positions[target] = Position()
        underWay = true
        return true
    }

    /// What a target did with its turn.
    package enum Turn {
        /// Sent its last values: the replay is over.
        case finished
        /// Sent some, or is not ready for more (busy): the replay goes on at the next turn.
        case goesOn
        /// Gone (a TCP link that dropped): the replay ends unfinished.
        case abandoned
    }

    /// Starts the replays asked for, then gives each one under way its turn: `turn(target,
    /// &position)` sends up to ``budget`` values from `position` and says what became of the
    /// replay. Returns whether one is still under way. The owner's thread, after its live
    /// events.
    @discardableResult
    package func run(_ turn: (Int, inout Position) -> Turn) -> Bool {
        if raised.exchange(false, ordering: .acquiring) {
            for target in positions.indices where wanted[target].exchange(false, ordering: .acquiring) {
                positions[target] = Position()
            }
        }
        var goesOn = false
        for target in positions.indices {
            guard var position = positions[target] else { continue }
            switch turn(target, &position) {
            case .finished, .abandoned:
                positions[target] = nil
            case .goesOn:
                positions[target] = position
                goesOn = true
            }
        }
        underWay = goesOn
        return goesOn
    }
}
