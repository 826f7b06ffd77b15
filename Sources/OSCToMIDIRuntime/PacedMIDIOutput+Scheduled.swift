import ALSASequencer
import Glibc
import MIDI
import Recovery

/// Scheduled events (a bundle's): written to the kernel's queue, or held in the port's
/// ``ScheduledBacklog`` while the kernel's pool is full.
extension PacedMIDIOutput {
    /// Schedules `event` at `time` (monotonic nanoseconds): the kernel's queue holds it until
    /// then; if the kernel has no room (its pool is full), the port's scheduled queue does. Not
    /// paced: a scheduled SysEx leaves in one go at its time.
    ///
    /// A port's scheduled queue holds ``scheduledCapacity`` events; past that, an event due
    /// sooner than the latest it holds (a note-off aside) takes that one's place, so a bundle for
    /// the next moment is never lost behind a pile of bundles for the next hour; the other is
    /// dropped, counted by kind. A silencing event (``silencesNotes(_:)``) is never the one that
    /// gives way: one for a note switched on by an event scheduled before it, or sounding now,
    /// goes into a reserve of ``releaseReserve`` more slots; one for a note whose silencing is
    /// already scheduled, or that was never on, is dropped when the queue is full.
    func schedule(_ event: MIDIEvent, at time: UInt64, now: UInt64) {
        let port = Int(event.port)
        guard port < ports.count else {
            release(event)
            return
        }
        if backlog.count(port) == 0 {
            if case .done = scheduleInKernel(event, port: port, at: time, now: now) {
                ledger.scheduled(event, port: port, at: time, now: now, inKernel: true)
                return
            }
            kernel.retryAt = now + Self.kernelRetryInterval
        }
        hold(event, at: time, port: port, now: now)
    }

    /// Writes `event` to the kernel's queue for `time`: `.done` when it went (counted, tracked
    /// and its SysEx released) or was refused for good (counted as failed), `.blocked` when the
    /// pool is full.
    fileprivate func scheduleInKernel(_ event: MIDIEvent, port: Int, at time: UInt64, now: UInt64) -> Attempt {
        do {
            if event.kind == .sysex, let sysexStore {
                try sysexStore.withBytes(event.sysex) { (bytes) throws(ALSAError) in
                    guard !bytes.isEmpty else { return }
                    try writer.schedule(event, from: ports[port], at: time, sysexBytes: bytes)
                }
            } else {
                try writer.schedule(event, from: ports[port], at: time, sysexBytes: nil)
            }
        } catch {
            guard error.code != -EAGAIN else { return .blocked }
            counters[port].failed.add(1, ordering: .relaxed)
            release(event)
            return .done
        }
        release(event)
        counters[port].sent.add(1, ordering: .relaxed)
        kernel.until = max(kernel.until ?? 0, time)
        return .done
    }

    /// Puts `event` into `port`'s scheduled queue, or drops it (counted) when the queue is full
    /// and the event neither is sooner than what it holds nor silences a note that needs it.
    fileprivate func hold(_ event: MIDIEvent, at time: UInt64, port: Int, now: UInt64) {
        let entry = ScheduledEvent(time: time, event: event)
        let count = backlog.count(port)
        if count >= scheduledCapacity {
            if Self.silencesNotes(event) {
                guard ledger.needsScheduled(event, port: port) else {
                    dropScheduled(event, port: port)
                    return
                }
                if count >= backlog.capacity {
                    // The reserve is full too (never expected): the latest other event gives way.
                    guard let victim = backlog.lastIndex(port: port, where: { !Self.silencesNotes($0.event) }) else {
                        counters[port].droppedNoteOffs.add(1, ordering: .relaxed)
                        return
                    }
                    dropScheduled(backlog.remove(at: victim, port: port).event, port: port)
                } else {
                    counters[port].reservedNoteOffs.add(1, ordering: .relaxed)
                }
            } else {
                guard let victim = backlog.lastIndex(port: port, where: { !Self.silencesNotes($0.event) }),
                    backlog.element(victim, port: port).time > time
                else {
                    dropScheduled(event, port: port)
                    return
                }
                dropScheduled(backlog.remove(at: victim, port: port).event, port: port)
            }
        }
        _ = backlog.insertInTimeOrder(entry, port: port)
        ledger.scheduled(event, port: port, at: time, now: now, inKernel: false)
        counters[port].scheduledHeld.add(1, ordering: .relaxed)
        if backlog.count(port) > perPort[port].scheduledHighWater {
            perPort[port].scheduledHighWater = backlog.count(port)
            counters[port].scheduledHighWater.store(backlog.count(port), ordering: .relaxed)
        }
    }

    fileprivate func dropScheduled(_ event: MIDIEvent, port: Int) {
        counters[port].droppedScheduled[Int(event.kind.rawValue) & 31].add(1, ordering: .relaxed)
        release(event)
    }

    /// Drops every scheduled event still waiting in our scheduled queues (stopping: those in the
    /// kernel's queue are removed alongside) and forgets what went to the kernel's queue.
    func discardScheduled() {
        backlog.removeAll { release($0.event) }
        kernel.until = nil
    }

    /// Writes the scheduled events that waited for room and are due now, as events sent now; when
    /// the kernel may have room again, hands it the rest, earliest first, until it refuses one.
    /// Returns when to call again for them.
    func serviceScheduled(now: UInt64) -> UInt64 {
        var port = 0
        while port < ports.count {
            while backlog.count(port) > 0 && backlog.first(port).time <= now {
                let event = backlog.first(port).event
                backlog.removeFirst(port)
                send(event, now: now)
            }
            port += 1
        }
        flush(now: now)
        if backlog.total > 0 && now >= kernel.retryAt {
            var blocked = false
            port = 0
            while port < ports.count && !blocked {
                while backlog.count(port) > 0 {
                    let event = backlog.first(port).event
                    let time = backlog.first(port).time
                    guard case .done = scheduleInKernel(event, port: port, at: time, now: now) else {
                        blocked = true
                        break
                    }
                    // Its note-on now counts as gone out; the rest was recorded when it was held.
                    ledger.scheduled(event, port: port, at: time, now: now, inKernel: true)
                    backlog.removeFirst(port)
                }
                port += 1
            }
            if blocked { kernel.retryAt = now + Self.kernelRetryInterval }
        }
        guard backlog.total > 0 else { return .max }
        var earliest = kernel.retryAt
        port = 0
        while port < ports.count {
            if backlog.count(port) > 0 { earliest = min(earliest, backlog.first(port).time) }
            port += 1
        }
        return earliest
    }
}
