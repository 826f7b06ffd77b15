import MIDI

/// Scheduled events the kernel had no room for (its output pool full), per output port, in time
/// order, events of equal time in the order they came. ``PacedMIDIOutput`` hands them to the
/// kernel as room frees, or writes them itself at their time.
typealias ScheduledBacklog = PortQueues<ScheduledEvent>

/// An event and when it is due.
struct ScheduledEvent: BitwiseCopyable {
    /// When the event is due, monotonic nanoseconds.
    var time: UInt64
    package var event: MIDIEvent
}

extension PortQueues where Element == ScheduledEvent {
    /// Inserts `entry` after every entry of `port` due at or before its time; false when the
    /// port's slots are all taken. Events nearly always come in time order, so this is nearly
    /// always an append.
    func insertInTimeOrder(_ entry: ScheduledEvent, port: Int) -> Bool {
        let count = count(port)
        var low = 0
        var high = count
        if count > 0 && element(count - 1, port: port).time <= entry.time {
            low = count
        }
        // The first position whose time is later.
        while low < high {
            let middle = (low + high) / 2
            if element(middle, port: port).time <= entry.time { low = middle + 1 } else { high = middle }
        }
        return insert(entry, at: low, port: port)
    }
}
