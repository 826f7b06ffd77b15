import MIDI

/// Scheduled events the kernel had no room for (its output pool full), per output port, in time
/// order: a bounded ring per port, kept sorted by time, events of equal time in the order they
/// came. ``PacedMIDIOutput`` hands them to the kernel as room frees, or writes them itself at
/// their time.
///
/// Events nearly always come in time order, so an insertion is an append at the tail and the
/// earliest leaves from the head, both without moving anything; an event earlier than some
/// already held moves the later ones one place. Owned by one thread; nothing here allocates
/// after `init`, and a slot's memory is touched only once it is used.
final class ScheduledBacklog {
    struct Entry: BitwiseCopyable {
        /// When the event is due, monotonic nanoseconds.
        var time: UInt64
        var event: MIDIEvent
    }

    /// Slots per port.
    let capacity: Int
    private let ports: Int
    private let entries: UnsafeMutablePointer<Entry>
    private let heads: UnsafeMutablePointer<Int>
    private let counts: UnsafeMutablePointer<Int>
    /// Events held over all ports.
    private(set) var total = 0

    init(ports: Int, capacity: Int) {
        self.ports = max(ports, 1)
        self.capacity = capacity
        // Left uninitialised (Entry is trivial): untouched slots cost no memory.
        entries = .allocate(capacity: self.ports * capacity)
        heads = .allocate(capacity: self.ports)
        heads.initialize(repeating: 0, count: self.ports)
        counts = .allocate(capacity: self.ports)
        counts.initialize(repeating: 0, count: self.ports)
    }

    deinit {
        entries.deallocate()
        heads.deallocate()
        counts.deallocate()
    }

    /// Events `port` holds.
    @inline(__always)
    func count(_ port: Int) -> Int { counts[port] }

    /// The entry `index` places after `port`'s earliest (below ``count(_:)``).
    @inline(__always)
    func entry(_ index: Int, port: Int) -> Entry { entries[slot(index, port: port)] }

    /// `port`'s earliest entry; `port` holds at least one.
    @inline(__always)
    func first(_ port: Int) -> Entry { entries[port * capacity + heads[port]] }

    @inline(__always)
    private func slot(_ index: Int, port: Int) -> Int {
        var position = heads[port] + index
        if position >= capacity { position -= capacity }
        return port * capacity + position
    }

    /// Removes `port`'s earliest entry; `port` holds at least one.
    func removeFirst(_ port: Int) {
        heads[port] = heads[port] + 1 == capacity ? 0 : heads[port] + 1
        counts[port] -= 1
        total -= 1
    }

    /// Inserts `entry` after every entry of `port` due at or before its time; false when the
    /// port's slots are all taken.
    func insert(_ entry: Entry, port: Int) -> Bool {
        let count = counts[port]
        guard count < capacity else { return false }
        // The first position whose time is later (binary search; usually `count`).
        var low = 0
        var high = count
        if count > 0 && self.entry(count - 1, port: port).time <= entry.time {
            low = count
        }
        while low < high {
            let middle = (low + high) / 2
            if self.entry(middle, port: port).time <= entry.time { low = middle + 1 } else { high = middle }
        }
        var index = count
        while index > low {
            entries[slot(index, port: port)] = entries[slot(index - 1, port: port)]
            index -= 1
        }
        (entries + slot(low, port: port)).initialize(to: entry)
        counts[port] = count + 1
        total += 1
        return true
    }

    /// The position of the latest entry of `port` whose event satisfies `predicate`.
    func lastIndex(port: Int, where predicate: (MIDIEvent) -> Bool) -> Int? {
        var index = counts[port] - 1
        while index >= 0 {
            if predicate(entry(index, port: port).event) { return index }
            index -= 1
        }
        return nil
    }

    /// Removes and returns the entry at `index` of `port`.
    func remove(at index: Int, port: Int) -> Entry {
        let removed = entry(index, port: port)
        var position = index
        while position + 1 < counts[port] {
            entries[slot(position, port: port)] = entries[slot(position + 1, port: port)]
            position += 1
        }
        counts[port] -= 1
        total -= 1
        return removed
    }

    /// Empties every port, calling `body` with each event it held.
    func removeAll(_ body: (MIDIEvent) -> Void) {
        var port = 0
        while port < ports {
            while counts[port] > 0 {
                body(first(port).event)
                removeFirst(port)
            }
            port += 1
        }
    }
}
