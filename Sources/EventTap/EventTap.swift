import MIDI
import Storage
import Synchronization

/// Events copied out of one event thread for the status page's monitor, read by the page
/// server's thread: one producer, one consumer, an ``SPSCRing``, nothing allocated per event.
///
/// Off (no page watching), an event costs the thread one relaxed load of ``isOn``. On, an
/// event is copied into the ring with up to ``bytesPerEntry`` bytes of what went out (an OSC
/// message), one record each; when the ring is full it is dropped and counted instead, so a
/// burst is sampled for the page and never slows the music.
package final class EventTap: Sendable {
    /// What an entry records.
    package enum Kind: UInt8, Sendable, BitwiseCopyable {
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
    package struct Entry: Sendable, BitwiseCopyable {
        package var kind: Kind
        package var length: UInt8
        package var index: UInt16
        package var destination: UInt16
        package var event: MIDIEvent
    }

    /// Entries the ring holds at least (more when they carry fewer than ``bytesPerEntry``
    /// bytes): 50 ms of a 10,000 events/s burst twice over.
    package static let capacity = 1024
    /// Bytes kept of each message; a longer one is cut there.
    package static let bytesPerEntry = 64

    /// Each entry a record: the entry, then its bytes.
    private let ring = SPSCRing(
        minimumCapacity: EventTap.capacity
            * SPSCRing.space(forRecordOf: MemoryLayout<Entry>.stride + EventTap.bytesPerEntry))
    private let droppedCount = Atomic<UInt64>(0)
    private let on = Atomic<Bool>(false)

    /// An empty tap, off.
    package init() {}

    /// Whether a page watches: the producer records only then.
    @inline(__always)
    package var isOn: Bool { on.load(ordering: .relaxed) }

    /// Turns recording on or off (the consumer's thread).
    package func set(on value: Bool) { on.store(value, ordering: .relaxed) }

    /// Records `event` with `message`'s first ``bytesPerEntry`` bytes (the producer's thread);
    /// dropped and counted when the ring is full.
    @inline(__always)
    package func record(
        _ kind: Kind, index: Int, destination: Int = 0, _ event: MIDIEvent, message: UnsafeRawBufferPointer? = nil
    ) {
        let length = min(message?.count ?? 0, Self.bytesPerEntry)
        let entry = Entry(
            kind: kind, length: UInt8(length), index: UInt16(truncatingIfNeeded: index),
            destination: UInt16(truncatingIfNeeded: destination), event: event)
        let written = ring.write(tag: 0, size: MemoryLayout<Entry>.stride + length) { record in
            record.storeBytes(of: entry, as: Entry.self)
            if let source = message?.baseAddress, length > 0 {
                (record + MemoryLayout<Entry>.stride).copyMemory(from: source, byteCount: length)
            }
        }
        if !written { droppedCount.add(1, ordering: .relaxed) }
    }

    /// Calls `body` with each entry recorded since the last call, oldest first, and its bytes
    /// (the consumer's thread); returns how many were dropped meanwhile.
    package func drain(_ body: (Entry, UnsafeRawBufferPointer) -> Void) -> UInt64 {
        ring.read { _, record in
            let entry = record.load(as: Entry.self)
            body(entry, UnsafeRawBufferPointer(rebasing: record[MemoryLayout<Entry>.stride...]))
            return true
        }
        return droppedCount.exchange(0, ordering: .relaxed)
    }
}
