import OSC
import OSCTransport
import Recovery
import Storage

/// The bundle each time-tagged destination (`latency`) of a route is filling: the events of one
/// read that go to one destination leave as one bundle, with one time tag, instead of a
/// datagram each (a chord is one packet to lose or not). A bundle is closed, queued on the
/// route's sender, when an event of another read comes, when it is full, before any other
/// packet to its destination, and before every flush.
///
/// Used by the thread that runs the route. Plain memory set up once: nothing here allocates.
final class OpenBundles {
    /// Bytes per bundle: the sender's slot, so a closed bundle is queued like any packet.
    package let capacity: Int
    private let count: Int
    private let bytes: FixedBytes
    private var storage: UnsafeMutableRawPointer { bytes.bytes.baseAddress! }
    // Per destination: the bytes of its open bundle (0: none), the read stamp of its events,
    // and the kind of its one event (`.other` once it holds two).
    private let sizes: FixedBuffer<Int>
    private let stamps: FixedBuffer<UInt64>
    private let kinds: FixedBuffer<OSCPacketKind>
    /// "#bundle\0" and the time tag, before the first element's size.
    static let headerSize = 16

    package init(destinations count: Int, capacity: Int) {
        self.count = max(count, 1)
        self.capacity = capacity
        bytes = FixedBytes(count: self.count * capacity)
        bytes.bytes.initializeMemory(as: UInt8.self, repeating: 0)
        sizes = FixedBuffer(repeating: 0, count: self.count)
        stamps = FixedBuffer(repeating: 0, count: self.count)
        kinds = FixedBuffer(repeating: .other, count: self.count)
    }

    /// Adds the message `write` puts into the room it is given (returning its size, 0 if it did
    /// not fit) to `destination`'s bundle for the read stamped `stamp`, opening one tagged `tag`
    /// if none is open for that read (closing the one that is, onto `sender`). False if the
    /// message does not fit even an empty bundle: the caller sends it on its own.
    @inline(__always)
    func append(
        to destination: Int, stamp: UInt64, tag: OSCTimeTag, kind: OSCPacketKind, sender: OSCSender,
        _ write: (UnsafeMutableRawBufferPointer) -> Int
    ) -> Bool {
        if sizes[destination] != 0 && stamps[destination] != stamp { close(destination, onto: sender) }
        let base = storage + destination * capacity
        if sizes[destination] != 0 {
            let offset = sizes[destination]
            let size = write(UnsafeMutableRawBufferPointer(start: base + offset + 4, count: capacity - offset - 4))
            if size > 0 {
                base.storeBytes(of: UInt32(size).bigEndian, toByteOffset: offset, as: UInt32.self)
                sizes[destination] = offset + 4 + size
                kinds[destination] = .other
                return true
            }
            // Full: this one starts the next bundle.
            close(destination, onto: sender)
        }
        let first = Self.headerSize + 4
        let size = write(UnsafeMutableRawBufferPointer(start: base + first, count: capacity - first))
        guard size > 0 else { return false }
        tag.writeBundleHeader(elementSize: size, into: base)
        sizes[destination] = first + size
        stamps[destination] = stamp
        kinds[destination] = kind
        return true
    }

    /// Queues `destination`'s open bundle, if any, on `sender`.
    @inline(__always)
    func close(_ destination: Int, onto sender: OSCSender) {
        let size = sizes[destination]
        guard size != 0 else { return }
        sender.queue(
            UnsafeRawBufferPointer(start: storage + destination * capacity, count: size), to: destination,
            kind: kinds[destination])
        sizes[destination] = 0
    }

    /// Queues every open bundle on `sender`, in destination order (each destination's own
    /// packets keep their order; across destinations there is none to keep).
    func closeAll(onto sender: OSCSender) {
        var destination = 0
        while destination < count {
            close(destination, onto: sender)
            destination &+= 1
        }
    }
}
