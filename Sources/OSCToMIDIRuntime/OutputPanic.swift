import MIDI
import Synchronization

/// The status page's panic for the output ports: asked for from any thread, done at the OSC
/// thread's next turn: on every output port and channel, sustain off and All Notes Off.
package final class OutputPanic: Sendable {
    private let wanted = Atomic<Bool>(false)

    init() {}

    /// Asks for it (any thread); the caller then wakes the OSC thread.
    func ask() { wanted.store(true, ordering: .releasing) }

    /// Whether it was asked for since the last call, which takes it (the OSC thread).
    @inline(__always)
    func take() -> Bool { wanted.load(ordering: .relaxed) && wanted.exchange(false, ordering: .acquiring) }

    /// Calls `body` with each event of a panic on `ports` output ports, and the output it is for.
    static func events(ports: Int, _ body: (MIDIEvent, Int) -> Void) {
        for port in 0..<ports {
            for channel in UInt8(0)..<16 {
                for controller in [UInt8(64), 123] {
                    body(
                        MIDIEvent(.controlChange, channel: channel, data1: controller, data2: 0, port: UInt16(port)),
                        port)
                }
            }
        }
    }
}
