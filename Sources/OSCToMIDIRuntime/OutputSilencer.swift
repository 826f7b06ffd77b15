import ALSASequencer
import Glibc
import MIDI
import Pipeline
import Platform

/// Leaves nothing sounding and nothing to come when the OSC input stops: from what each output's
/// notes did (the output's ``OutputNoteLedger``), it removes the events still
/// scheduled on the queue, sends a note-off for every note the pipeline holds and for every note
/// that may be sounding (played, or scheduled and already due), lets paced output finish (up to
/// a second), then drops what is left but the note-offs, which go out regardless.
package struct OutputSilencer: Sendable {
    /// How far past the queue's clock a scheduled note-on counts as played when stopping.
    static var cutoffMargin: UInt64 { 5_000_000 }

    /// Silences `output` at `now`, once the OSC thread has stopped: `emit` sends an event to an
    /// output as the thread would (recorded, then written).
    func silence(
        queue: SequencerQueue, output: PacedMIDIOutput<SequencerPortWriter>, route: Route, now: UInt64,
        emit: (MIDIEvent, Int) -> Void
    ) {
        // First, so that nothing scheduled can start a note after the cutoff below; what waited
        // for room in the kernel's pool goes with it.
        queue.removePendingEvents()
        // Everything due by the cutoff has played, and nothing after it will. The queue's clock
        // and the monotonic one may differ by a timer tick; the margin errs towards a note-off
        // that was not needed. A stopped queue holds nothing.
        let queueNow = queue.isRunning ? (try? queue.now()).map { $0 + queue.monotonicOrigin } ?? 0 : 0
        let cutoff = max(now, queueNow) + Self.cutoffMargin
        output.discardScheduled()
        try? queue.stop()
        // The notes the pipeline holds, in its note-off form, but only those that may sound: it
        // also holds notes whose scheduled note-on was just removed.
        route.releaseAll { noteOff, destination in
            if output.ledger.maySound(port: Int(noteOff.port), channel: noteOff.channel, note: noteOff.note, at: cutoff)
            {
                emit(noteOff, destination)
            }
        }
        // Then the rest: notes whose note-off was scheduled and removed.
        output.ledger.forEachMaySound(at: cutoff) { noteOff in emit(noteOff, 0) }
        let deadline = now + 1_000_000_000
        while !output.isIdle && MonotonicClock.now() < deadline {
            _ = output.service(now: MonotonicClock.now())
            usleep(1000)
        }
        output.finish()
    }
}
