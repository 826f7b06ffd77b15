import ALSASequencer
import BridgeSession
import MIDI
import Recovery

/// Where ``PacedMIDIOutput`` writes events: our ALSA client and its queue, or a test double that
/// records writes and refuses some with `EAGAIN` to fill a port's queue.
package protocol MIDIPortWriter: AnyObject {
    /// Writes `event` out of our port `port` now (a SysEx: the piece `sysexBytes`).
    func send(_ event: MIDIEvent, from port: UInt8, sysexBytes: UnsafeRawBufferPointer?) throws(ALSAError)
    /// Schedules `event` out of our port `port` at `time` (monotonic nanoseconds), starting the
    /// queue if it is stopped.
    func schedule(_ event: MIDIEvent, from port: UInt8, at time: UInt64, sysexBytes: UnsafeRawBufferPointer?)
        throws(ALSAError)
    /// Stops the queue (and its kernel timer) if nothing waits in it; whether it is stopped.
    func stopQueueIfEmpty() -> Bool
    /// Puts `event` (a kind ``DirectOutput/canStage(_:)`` allows) from our port `port` into
    /// staging slot `index`, below ``DirectOutput/stageCapacity``.
    func stage(_ event: MIDIEvent, from port: UInt8, at index: Int)
    /// Writes the staged events in `range` in order: how many went out, and what stopped the
    /// next one (nil with fewer written: unknown, write the rest again), as
    /// ``DirectOutput/writeStaged(_:)``.
    func writeStaged(_ range: Range<Int>) -> (written: Int, error: ALSAError?)
}

/// The ALSA writer: direct output to our ports' subscribers, and scheduling on one queue.
package final class SequencerPortWriter: MIDIPortWriter {
    let client: SequencerClient
    let queue: SequencerQueue
    /// Direct output through an event kept ready (the OSC thread alone writes).
    private let direct: DirectOutput

    package init(client: SequencerClient, queue: SequencerQueue) {
        self.client = client
        self.queue = queue
        direct = DirectOutput(client: client)
    }

    @inline(__always)
    package func send(_ event: MIDIEvent, from port: UInt8, sysexBytes: UnsafeRawBufferPointer?) throws(ALSAError) {
        try direct.send(event, from: port, sysexBytes: sysexBytes)
    }

    package func schedule(_ event: MIDIEvent, from port: UInt8, at time: UInt64, sysexBytes: UnsafeRawBufferPointer?)
        throws(ALSAError)
    {
        // A stopped queue starts again from 0, re-anchored on the monotonic clock.
        try queue.start()
        try client.send(event, from: port, on: queue, at: queue.time(atMonotonic: time), sysexBytes: sysexBytes)
    }

    package func stopQueueIfEmpty() -> Bool {
        guard queue.isRunning else { return true }
        guard let pending = try? queue.pendingEvents(), pending == 0 else { return false }
        return (try? queue.stop()) != nil
    }

    @inline(__always)
    package func stage(_ event: MIDIEvent, from port: UInt8, at index: Int) {
        direct.stage(event, from: port, at: index)
    }

    package func writeStaged(_ range: Range<Int>) -> (written: Int, error: ALSAError?) {
        direct.writeStaged(range)
    }
}
