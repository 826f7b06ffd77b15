import MIDI
import Storage

/// Lets through at most one value per interval for each channel x controller (and each
/// channel's pitch bend and channel pressure); in between, the latest value waits.
///
/// A value arriving less than ``interval`` after the last one that passed on its slot is held
/// as the slot's pending value (replacing an older pending one) and dropped. ``flushDue(now:into:)``
/// emits each pending value whose interval has elapsed, so the last value of a gesture always
/// arrives; ``nextDeadline`` tells when the next one falls due. A value that passes on time
/// supersedes the pending one. Other kinds (including 14-bit controllers, RPN and NRPN) pass.
///
/// State is fixed: 16 x 128 controller slots plus 16 + 16, allocated when the throttle is built,
/// in a buffer that copies of this value share; a ``Route`` gives its chain fresh buffers.
package struct Throttle: Sendable {
    /// The shortest time between two values of one slot, in nanoseconds (at least 1).
    let interval: UInt64
    private let state = State()

    /// At most `maxPerSecond` values per second per slot (at least 1).
    package init(maxPerSecond: Int) {
        interval = 1_000_000_000 / UInt64(max(1, min(maxPerSecond, 1_000_000_000)))
    }

    /// At most one value per `interval` nanoseconds per slot.
    package init(interval: UInt64) {
        self.interval = max(1, interval)
    }

    /// The same throttle with its own, empty state.
    func withFreshState() -> Throttle { Throttle(interval: interval) }

    /// Passes `event` or holds it as its slot's pending value (`false`) at time `now` (ns).
    package func process(_ event: inout MIDIEvent, now: UInt64) -> Bool {
        let slot = State.slot(of: event)
        guard slot >= 0 else { return true }
        let last = state.lastPassed[slot]
        if last == State.never || now &- last >= interval {
            state.lastPassed[slot] = now
            state.clearPending(slot)
            return true
        }
        state.pending[slot] = event
        state.setPending(slot)
        return false
    }

    /// Emits, lowest slot first, every pending value whose interval has elapsed at `now`.
    func flushDue(now: UInt64, into sink: (MIDIEvent) -> Void) {
        var word = 0
        while word < State.words {
            var remaining = state.pendingBits[word]
            while remaining != 0 {
                let slot = word << 6 | remaining.trailingZeroBitCount
                remaining &= remaining - 1
                if now &- state.lastPassed[slot] >= interval {
                    state.lastPassed[slot] = now
                    state.clearPending(slot)
                    sink(state.pending[slot])
                }
            }
            word += 1
        }
    }

    /// When the earliest pending value falls due (ns), or `nil` when nothing is pending.
    var nextDeadline: UInt64? {
        var earliest = UInt64.max
        var any = false
        var word = 0
        while word < State.words {
            var remaining = state.pendingBits[word]
            while remaining != 0 {
                let slot = word << 6 | remaining.trailingZeroBitCount
                remaining &= remaining - 1
                earliest = min(earliest, state.lastPassed[slot] &+ interval)
                any = true
            }
            word += 1
        }
        return any ? earliest : nil
    }

    /// The number of values waiting.
    package var pendingCount: Int {
        var count = 0
        var word = 0
        while word < State.words {
            count += state.pendingBits[word].nonzeroBitCount
            word += 1
        }
        return count
    }

    // @unchecked Sendable: mutated only by the one thread running the route that owns it.
    private final class State: @unchecked Sendable {
        static let controllerSlots = 16 * 128
        static let slots = controllerSlots + 32
        static let words = (slots + 63) / 64
        static let never = UInt64.max

        let lastPassed = FixedBuffer(repeating: never, count: slots)
        let pending = FixedBuffer(repeating: MIDIEvent(.controlChange), count: slots)
        let pendingBits = FixedBuffer<UInt64>(repeating: 0, count: words)

        /// The slot of a throttled kind, or -1.
        static func slot(of event: MIDIEvent) -> Int {
            let channel = Int(event.channel & 15)
            switch event.kind {
            case .controlChange: return channel << 7 | Int(event.data1 & 127)
            case .pitchBend: return controllerSlots + channel
            case .channelPressure: return controllerSlots + 16 + channel
            default: return -1
            }
        }

        func setPending(_ slot: Int) { pendingBits[slot >> 6] |= 1 << UInt64(slot & 63) }
        func clearPending(_ slot: Int) { pendingBits[slot >> 6] &= ~(1 << UInt64(slot & 63)) }
    }
}
