import Storage
import Synchronization

/// Counters of one output port, readable from any thread (relaxed: statistics only).
final class OutputPortCounters: Sendable {
    /// Events written (a SysEx counts once, however many chunks), now or scheduled.
    let sent = Atomic<Int>(0)
    /// Events other than note-offs dropped because the port's queue was full.
    let droppedQueueFull = Atomic<Int>(0)
    /// Note-offs (and all-notes-off) dropped from a full queue because they silence nothing: no
    /// note-on for them went out since the last note-off.
    let droppedRedundantNoteOffs = Atomic<Int>(0)
    /// Note-offs that found even the reserve full (never expected: the reserve is sized for one
    /// per note).
    let droppedNoteOffs = Atomic<Int>(0)
    /// Note-offs queued past the capacity, in the reserve kept for them.
    let reservedNoteOffs = Atomic<Int>(0)
    /// Events still waiting when the output stopped (note-offs are written, never dropped).
    let droppedAtStop = Atomic<Int>(0)
    /// Writes the kernel refused for a reason other than a full pool.
    let failed = Atomic<Int>(0)
    /// The most events the port's queue has held at once.
    let queueHighWater = Atomic<Int>(0)
    /// Scheduled events that found the kernel's pool full and waited in our scheduled queue.
    let scheduledHeld = Atomic<Int>(0)
    /// The most events the port's scheduled queue has held at once.
    let scheduledHighWater = Atomic<Int>(0)
    /// Scheduled events dropped from a full scheduled queue, by ``MIDIEventKind`` raw value
    /// (never a note-off still needed: see ``PacedMIDIOutput/schedule(_:at:now:)``).
    nonisolated(unsafe) let droppedScheduled = FixedBuffer(count: 32) { _ in Atomic<Int>(0) }
}
