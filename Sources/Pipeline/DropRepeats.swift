import MIDI
import Storage

/// Drops a control change, pitch bend or channel pressure whose value equals the last one that
/// passed on its channel (and controller); other events pass.
///
/// The first value on each channel x controller always passes. 14-bit controllers, RPN, NRPN
/// and poly pressure are not compared. The last values live in a buffer that copies of this
/// value share; a ``Route`` gives its chain fresh buffers.
package struct RepeatFilter: Sendable {
    private let state = State()

    /// A filter that has seen nothing yet.
    package init() {}

    /// The same filter with its own, empty state.
    func withFreshState() -> RepeatFilter { RepeatFilter() }

    /// Records `event`'s value; `false` when it repeats the last one.
    package func process(_ event: inout MIDIEvent) -> Bool {
        let channel = Int(event.channel & 15)
        switch event.kind {
        case .controlChange:
            let slot = channel << 7 | Int(event.data1 & 127)
            let value = Int16(event.data2)
            if state.controllers[slot] == value { return false }
            state.controllers[slot] = value
        case .pitchBend:
            if state.bends[channel] == event.value { return false }
            state.bends[channel] = event.value
        case .channelPressure:
            let value = Int16(event.data1)
            if state.pressures[channel] == value { return false }
            state.pressures[channel] = value
        default:
            break
        }
        return true
    }

    /// Forgets every last value.
    func reset() {
        state.reset()
    }

    // @unchecked Sendable: mutated only by the one thread running the route that owns it.
    private final class State: @unchecked Sendable {
        // -1 (or Int32.min for bends): nothing seen yet.
        let controllers = FixedBuffer<Int16>(repeating: -1, count: 16 * 128)
        let pressures = FixedBuffer<Int16>(repeating: -1, count: 16)
        let bends = FixedBuffer<Int32>(repeating: .min, count: 16)

        func reset() {
            controllers.unsafeElements.update(repeating: -1)
            pressures.unsafeElements.update(repeating: -1)
            bends.unsafeElements.update(repeating: .min)
        }
    }
}
