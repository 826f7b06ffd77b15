import MIDI
import Storage
import Synchronization

/// Events copied out of one event thread for the status page's monitor, read by the page
/// server's thread: one producer, one consumer, a fixed ring, nothing allocated per event.
///
/// Off (no page watching), an event costs the thread one relaxed load of ``isOn``. On, an
/// event is copied into the ring with up to ``bytesPerEntry`` bytes of what went out (an OSC
/// message); when the ring is full it is dropped and counted instead, so a burst is sampled
/// for the page and never slows the music.
public final class EventTap: @unchecked Sendable {
    // @unchecked Sendable: the ring's slots are written by the one producer before it
    // publishes `head` (releasing) and read by the one consumer after it loads it (acquiring).
    /// What an entry records.
    public enum Kind: UInt8, Sendable, BitwiseCopyable {
        /// MIDI read from an input port (`index`: our port).
        case midiIn
        /// An OSC message a route sent (`index`: the route, `destination` its destination).
        case oscOut
        /// An OSC message the OSC input received (`index` unused).
        case oscIn
        /// MIDI written to an output port (`index`: the output).
        case midiOut
    }

    /// One event as recorded; its bytes are in ``drain(_:)``'s second argument.
    public struct Entry: Sendable, BitwiseCopyable {
        public var kind: Kind
        public var length: UInt8
        public var index: UInt16
        public var destination: UInt16
        public var event: MIDIEvent
    }

    /// Entries the ring holds: 50 ms of a 10,000 events/s burst twice over.
    public static let capacity = 1024
    /// Bytes kept of each message; a longer one is cut there.
    public static let bytesPerEntry = 64

    private let entries = FixedBuffer<Entry>(uninitializedCount: EventTap.capacity)
    private let bytes = FixedBytes(count: EventTap.capacity * EventTap.bytesPerEntry)
    /// Entries written (the producer's) and read (the consumer's), counting up; the slot is
    /// the count modulo ``capacity``.
    private let written = Atomic<Int>(0)
    private let read = Atomic<Int>(0)
    private let droppedCount = Atomic<UInt64>(0)
    private let on = Atomic<Bool>(false)

    /// An empty tap, off.
    public init() {}

    /// Whether a page watches: the producer records only then.
    @inline(__always)
    public var isOn: Bool { on.load(ordering: .relaxed) }

    /// Turns recording on or off (the consumer's thread).
    public func set(on value: Bool) { on.store(value, ordering: .relaxed) }

    /// Records `event` with `message`'s first ``bytesPerEntry`` bytes (the producer's thread);
    /// dropped and counted when the ring is full.
    @inline(__always)
    public func record(
        _ kind: Kind, index: Int, destination: Int = 0, _ event: MIDIEvent, message: UnsafeRawBufferPointer? = nil
    ) {
        let next = written.load(ordering: .relaxed)
        guard next - read.load(ordering: .acquiring) < Self.capacity else {
            droppedCount.add(1, ordering: .relaxed)
            return
        }
        let slot = next & (Self.capacity - 1)
        let length = min(message?.count ?? 0, Self.bytesPerEntry)
        if let message, length > 0 {
            UnsafeMutableRawBufferPointer(rebasing: bytes.bytes[(slot * Self.bytesPerEntry)...].prefix(length))
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: message.prefix(length)))
        }
        entries[slot] = Entry(
            kind: kind, length: UInt8(length), index: UInt16(truncatingIfNeeded: index),
            destination: UInt16(truncatingIfNeeded: destination), event: event)
        written.store(next + 1, ordering: .releasing)
    }

    /// Calls `body` with each entry recorded since the last call, oldest first, and its bytes
    /// (the consumer's thread); returns how many were dropped meanwhile.
    public func drain(_ body: (Entry, UnsafeRawBufferPointer) -> Void) -> UInt64 {
        let end = written.load(ordering: .acquiring)
        var next = read.load(ordering: .relaxed)
        while next < end {
            let slot = next & (Self.capacity - 1)
            let entry = entries[slot]
            let start = slot * Self.bytesPerEntry
            body(entry, UnsafeRawBufferPointer(rebasing: bytes.bytes[start..<(start + Int(entry.length))]))
            next += 1
            read.store(next, ordering: .releasing)
        }
        return droppedCount.exchange(0, ordering: .relaxed)
    }
}
