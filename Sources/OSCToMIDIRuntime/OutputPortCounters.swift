import Recovery
import Storage
import Synchronization

/// Counters of one output port, readable from any thread (relaxed: statistics only).
package final class OutputPortCounters: Sendable {
    /// Events written (a SysEx counts once, however many chunks), now or scheduled.
    package let sent = Atomic<Int>(0)
    /// Events other than note-offs dropped because the port's queue was full.
    package let droppedQueueFull = Atomic<Int>(0)
    /// Note-offs (and all-notes-off) dropped from a full queue because they silence nothing: no
    /// note-on for them went out since the last note-off.
    package let droppedRedundantNoteOffs = Atomic<Int>(0)
    /// Note-offs that found even the reserve full (never expected: the reserve is sized for one
    /// per note).
    package let droppedNoteOffs = Atomic<Int>(0)
    /// Note-offs queued past the capacity, in the reserve kept for them.
    package let reservedNoteOffs = Atomic<Int>(0)
    /// Events still waiting when the output stopped (note-offs are written, never dropped).
    package let droppedAtStop = Atomic<Int>(0)
    /// Writes the kernel refused for a reason other than a full pool.
    package let failed = Atomic<Int>(0)
    /// The most events the port's queue has held at once.
    package let queueHighWater = Atomic<Int>(0)
    /// Scheduled events that found the kernel's pool full and waited in our scheduled queue.
    package let scheduledHeld = Atomic<Int>(0)
    /// The most events the port's scheduled queue has held at once.
    package let scheduledHighWater = Atomic<Int>(0)
    /// Scheduled events dropped from a full scheduled queue, by ``MIDIEventKind`` raw value
    /// (never a note-off still needed: see ``PacedMIDIOutput/schedule(_:at:now:)``).
    nonisolated(unsafe) package let droppedScheduled = FixedBuffer(count: 32) { _ in Atomic<Int>(0) }
}
