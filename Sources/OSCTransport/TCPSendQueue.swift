import MIDI
import Storage
import Synchronization

/// What a ``TCPLink`` dropped, by kind, and the note-ons it left out as late: counters the
/// input thread (a full hand-over ring) and the link's thread (a full queue) both bump and
/// any thread may read (relaxed: statistics only).
final class TCPDropCounters: Sendable {
    let noteOns = Atomic<Int>(0)
    let noteOffs = Atomic<Int>(0)
    let others = Atomic<Int>(0)
    let lateNoteOns = Atomic<Int>(0)

    func count(_ kind: OSCPacketKind) {
        switch kind.counterIndex {
        case 0: noteOns.add(1, ordering: .relaxed)
        case 1: noteOffs.add(1, ordering: .relaxed)
        default: others.add(1, ordering: .relaxed)
        }
    }
}

/// A TCP link's queue of packets waiting for its connection, and the rules it keeps them by:
/// when full, the oldest packet that is not a note-off goes; after an outage, the note-offs of
/// notes sounding at the receiver go first and note-ons older than the timeout are left out.
///
/// The link's thread's own: records of [size: UInt32][kind: UInt32][queued at: UInt64][bytes]
/// padded to 8, from `pendingStart` to `pendingEnd`, in memory set up once; `scratch` is where
/// a compaction or a reorder rebuilds them, in one linear pass each.
final class TCPSendQueue {
    /// The most packets held.
    package let capacity: Int
    /// How long a note-on may wait and still be sent, in nanoseconds.
    let noteOnTimeout: UInt64
    let drops: TCPDropCounters

    // Two areas of `pendingCapacity` bytes: the records waiting, and where a rebuild writes
    // those it keeps before the two trade places.
    private let areas: FixedBytes
    private var pendingIsSecond = false
    private var pending: UnsafeMutableRawPointer { areas.baseAddress + (pendingIsSecond ? pendingCapacity : 0) }
    private var scratch: UnsafeMutableRawPointer { areas.baseAddress + (pendingIsSecond ? 0 : pendingCapacity) }
    private let pendingCapacity: Int
    private var pendingStart = 0
    private var pendingEnd = 0
    private var pendingCount = 0
    // The notes whose note-on is queued ahead, for the reordering after an outage.
    private var noteOnQueued = HeldNotes()

    /// Room for `capacity` typical packets (under 64 bytes), or a few of `largestPacket` bytes.
    package init(capacity: Int, noteOnTimeout: UInt64, largestPacket: Int, drops: TCPDropCounters) {
        self.capacity = capacity
        self.noteOnTimeout = noteOnTimeout
        self.drops = drops
        pendingCapacity = max(capacity * 80, 4 * (largestPacket + 16))
        areas = FixedBytes(count: 2 * pendingCapacity, alignment: 8)
    }

    /// How many packets wait.
    var count: Int { pendingCount }

    /// Whether a packet of `size` bytes fits as the queue stands, without dropping anything.
    func fits(packetOf size: Int) -> Bool {
        pendingCount < capacity && pendingEnd - pendingStart + Self.padded(16 + size) <= pendingCapacity
    }

    /// The oldest packet, nil when none waits; valid until the next change to the queue.
    var first: UnsafeRawBufferPointer? {
        guard pendingCount > 0 else { return nil }
        let size = Int(pending.load(fromByteOffset: pendingStart, as: UInt32.self))
        return UnsafeRawBufferPointer(start: pending + pendingStart + 16, count: size)
    }

    /// Removes the oldest packet.
    func removeFirst() {
        guard pendingCount > 0 else { return }
        pendingStart += Self.padded(16 + Int(pending.load(fromByteOffset: pendingStart, as: UInt32.self)))
        pendingCount -= 1
        if pendingCount == 0 {
            pendingStart = 0
            pendingEnd = 0
        }
    }

    private static func padded(_ size: Int) -> Int { (size + 7) & ~7 }

    /// Appends a packet to the queue, making room by the queue's rules if it is full.
    func append(_ packet: UnsafeRawBufferPointer, kind: OSCPacketKind, now: UInt64) {
        let size = Self.padded(16 + packet.count)
        if pendingCount >= capacity || pendingEnd + size > pendingCapacity {
            makeRoom(for: size, kind: kind, now: now)
            guard pendingCount < capacity && pendingEnd + size <= pendingCapacity else {
                drops.count(kind)
                return
            }
        }
        pending.storeBytes(of: UInt32(packet.count), toByteOffset: pendingEnd, as: UInt32.self)
        pending.storeBytes(of: kind.raw, toByteOffset: pendingEnd + 4, as: UInt32.self)
        pending.storeBytes(of: now, toByteOffset: pendingEnd + 8, as: UInt64.self)
        if let source = packet.baseAddress {
            (pending + pendingEnd + 16).copyMemory(from: source, byteCount: packet.count)
        }
        pendingEnd += size
        pendingCount += 1
    }

    /// One record of the link's queue, read back: [size: UInt32][kind: UInt32][queued at: UInt64]
    /// then the packet, padded to 8 bytes.
    private struct QueuedPacket {
        let kind: OSCPacketKind
        let queuedAt: UInt64
        /// The record's bytes in the queue, padding included.
        let recordSize: Int
    }

    private func queuedPacket(at offset: Int) -> QueuedPacket {
        QueuedPacket(
            kind: OSCPacketKind(raw: pending.load(fromByteOffset: offset + 4, as: UInt32.self)),
            queuedAt: pending.load(fromByteOffset: offset + 8, as: UInt64.self),
            recordSize: Self.padded(16 + Int(pending.load(fromByteOffset: offset, as: UInt32.self))))
    }

    /// A note-on that has waited longer than ``noteOnTimeout``: not sent.
    private func isLate(_ packet: QueuedPacket, now: UInt64) -> Bool {
        packet.kind.isNoteOn && now &- packet.queuedAt > noteOnTimeout
    }

    /// A rebuild of the queue into `scratch`, which then becomes the queue.
    private struct Rebuild {
        var written = 0
        var count = 0
    }

    private func keep(_ packet: QueuedPacket, at offset: Int, in rebuild: inout Rebuild) {
        (scratch + rebuild.written).copyMemory(from: pending + offset, byteCount: packet.recordSize)
        rebuild.written += packet.recordSize
        rebuild.count += 1
    }

    private func finish(_ rebuild: Rebuild) {
        pendingIsSecond.toggle()
        pendingStart = 0
        pendingEnd = rebuild.written
        pendingCount = rebuild.count
    }

    /// Compacts the queue for one more packet of `size` bytes: late note-ons go first, then, while
    /// there is still no room, the oldest packets that are not note-offs (a new note-off may push
    /// out anything but another note-off; anything else, only what is older than itself).
    private func makeRoom(for size: Int, kind: OSCPacketKind, now: UInt64) {
        var excess = max(pendingCount + 1 - capacity, 0)
        var bytesNeeded = max(pendingEnd - pendingStart + size - pendingCapacity, 0)
        var rebuild = Rebuild()
        var offset = pendingStart
        // One pass over the queue, keeping what stays.
        while offset < pendingEnd {
            let packet = queuedPacket(at: offset)
            if isLate(packet, now: now) {
                drops.lateNoteOns.add(1, ordering: .relaxed)
            } else if !packet.kind.isNoteOff && (excess > 0 || bytesNeeded > 0) {
                drops.count(packet.kind)
            } else {
                keep(packet, at: offset, in: &rebuild)
                offset += packet.recordSize
                continue
            }
            if excess > 0 { excess -= 1 }
            bytesNeeded = max(bytesNeeded - packet.recordSize, 0)
            offset += packet.recordSize
        }
        finish(rebuild)
    }

    /// Puts the queue in the order a receiver needs after an outage: first the note-offs whose
    /// note-on is not queued before them (their notes are sounding at the receiver), then the
    /// rest in order, without note-ons older than ``noteOnTimeout``.
    func reorderAfterOutage(now: UInt64) {
        guard pendingCount > 0 else { return }
        noteOnQueued = HeldNotes()
        var rebuild = Rebuild()
        // First pass: the note-offs that go first, in order; `noteOnQueued` marks a note-on kept ahead.
        var offset = pendingStart
        while offset < pendingEnd {
            let packet = queuedPacket(at: offset)
            let (channel, note) = (packet.kind.channel, packet.kind.note)
            if packet.kind.isNoteOn && !isLate(packet, now: now) {
                noteOnQueued.hold(channel: channel, note: note)
            } else if packet.kind.isNoteOff {
                if !noteOnQueued.isHeld(channel: channel, note: note) {
                    keep(packet, at: offset, in: &rebuild)
                    // Marked so the second pass leaves it out.
                    pending.storeBytes(of: UInt32.max, toByteOffset: offset + 4, as: UInt32.self)
                } else {
                    noteOnQueued.release(channel: channel, note: note)
                }
            }
            offset += packet.recordSize
        }
        // Second pass: everything else in order, late note-ons left out.
        offset = pendingStart
        while offset < pendingEnd {
            let packet = queuedPacket(at: offset)
            if packet.kind.raw == UInt32.max {
                // Moved to the front above.
            } else if isLate(packet, now: now) {
                drops.lateNoteOns.add(1, ordering: .relaxed)
            } else {
                keep(packet, at: offset, in: &rebuild)
            }
            offset += packet.recordSize
        }
        finish(rebuild)
    }

}
