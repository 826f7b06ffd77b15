import OSC
import OSCMapping
import Storage

/// What recent OSC addresses resolved to, for ``OSCToMIDITranslator/translate(_:timestamp:cache:into:)``:
/// senders repeat a handful of addresses, so only the first message at an address runs the
/// mapping rules' matchers, the OSC pattern matcher and the name comparisons.
///
/// A fixed table allocated once: `capacity` slots in sets of ``ways``, the set chosen by a hash
/// of the address bytes and each entry verified by comparing them, so a collision costs a miss
/// and never a wrong answer. A new address takes an empty slot of its set, or evicts the set's
/// entries in turn (counted, ``evictions``); an address longer than ``maximumAddressLength``
/// bytes is never kept. Its size is the cap: the bridge sizes it to the config
/// (``capacity(forRules:)``), so every address of a layout with a rule per control stays in,
/// and hostile senders spraying addresses only make their messages misses (counted,
/// ``misses``), each resolved through the translator's ``OSCMappingIndex``; lookups and
/// inserts allocate nothing.
///
/// What an address resolves to depends only on the translator (its rules, families and output
/// names), never on which ALSA ports the outputs are bound to, so binding changes keep it valid;
/// a cache handed a different translator (a reload builds a new one) empties itself first.
///
/// Not thread-safe: one thread (the bridge's OSC thread) owns it.
public final class OSCAddressCache: @unchecked Sendable {
    // @unchecked Sendable: built on one thread and handed to the OSC thread, which alone uses it.

    /// Addresses longer than this are resolved every time.
    public static let maximumAddressLength = 64

    /// The number of slots (a power of two).
    public let capacity: Int
    /// Slots per set (4, or `capacity` when smaller): an address can be in any slot of its set.
    public let ways: Int
    /// The most slots a cache sized by ``capacity(forRules:)`` has.
    public static let maximumCapacity = 16384
    private let hashes: FixedBuffer<UInt64>
    private let lengths: FixedBuffer<Int>
    private let keyBytes: FixedBytes
    private var keys: UnsafeMutableRawPointer { keyBytes.bytes.baseAddress.unsafelyUnwrapped }
    private let resolutions: FixedBuffer<AddressResolution>
    /// Per set, the way the next eviction takes.
    private let victims: FixedBuffer<UInt8>
    /// The translator the entries belong to (0: none yet), misses and evictions.
    private let state = FixedBuffer(repeating: 0, count: 3)

    /// The capacity for a translator with `count` mapping rules: four slots a rule (each rule's
    /// address and room for the built-in ones), at least 256, at most ``maximumCapacity``.
    public static func capacity(forRules count: Int) -> Int {
        var slots = 256
        while slots < min(count, maximumCapacity) * 4 && slots < maximumCapacity { slots <<= 1 }
        return slots
    }

    /// A cache of `capacity` slots (rounded up to a power of two).
    public init(capacity: Int = 256) {
        var slots = 1
        while slots < max(capacity, 1) { slots <<= 1 }
        self.capacity = slots
        ways = min(slots, 4)
        victims = FixedBuffer(repeating: 0, count: slots / ways)
        hashes = FixedBuffer(repeating: 0, count: slots)
        lengths = FixedBuffer(repeating: 0, count: slots)
        keyBytes = FixedBytes(count: slots * Self.maximumAddressLength, alignment: 8)
        keyBytes.bytes.initializeMemory(as: UInt8.self, repeating: 0)
        resolutions = FixedBuffer(repeating: AddressResolution(), count: slots)
    }

    /// Lookups that found nothing (first messages at an address, collisions, long addresses).
    public var misses: Int { state[1] }

    /// Entries that gave their slot to a new address (each a miss when its address comes back).
    public var evictions: Int { state[2] }

    /// Slots in use, for tests (a linear count).
    public var count: Int {
        var used = 0
        var slot = 0
        while slot < capacity {
            if hashes[slot] != 0 { used += 1 }
            slot += 1
        }
        return used
    }

    /// Forgets every address.
    public func removeAll() {
        hashes.unsafeElements.update(repeating: 0)
    }

    /// What the address at the start of `packet` (a datagram not yet validated) resolved to for
    /// translator `owner`, and the address's length, or nil. The address is found and hashed in
    /// one pass over its bytes, 8 at a time; a hit means the address, its NUL and its padding
    /// equal the key of a message validated before, so the caller need not validate them again.
    @inline(__always)
    func lookup(packet: UnsafeRawBufferPointer, owner: Int) -> (UnsafePointer<AddressResolution>, addressLength: Int)? {
        if state[0] != owner {
            removeAll()
            state[0] = owner
        }
        guard let base = packet.baseAddress else { return nil }
        let limit = min(packet.count & ~3, Self.maximumAddressLength)
        var hash = Self.seed
        var offset = 0
        while offset < limit {
            // Byte k of the packet is bits 8k..8k+7, whatever the machine's order; a last 4-byte
            // word is read alone, its missing half zero.
            var chunk =
                offset + 8 <= limit
                ? UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                : UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            // The lowest set bit marks the first zero byte (higher ones may be false alarms).
            let zeros = (chunk &- 0x0101_0101_0101_0101) & ~chunk & 0x8080_8080_8080_8080
            if zeros != 0 {
                let addressLength = offset + zeros.trailingZeroBitCount >> 3
                // The key: the address and its NUL padded to 4 bytes.
                let key = (addressLength + 4) & ~3
                guard key <= limit else { return nil }
                if key - offset == 4 { chunk &= 0xFFFF_FFFF }
                let final = Self.finish(Self.mix(hash, chunk))
                let first = Self.slot(final, capacity) & ~(ways - 1)
                var slot = first
                while slot < first + ways {
                    if hashes[slot] == final, lengths[slot] == key,
                        Self.equal(base, keys + slot * Self.maximumAddressLength, count: key)
                    {
                        return (UnsafePointer(resolutions.baseAddress + slot), addressLength)
                    }
                    slot += 1
                }
                return nil
            }
            hash = Self.mix(hash, chunk)
            offset += 8
        }
        return nil
    }

    /// What `message`'s address resolved to for translator `owner`, or nil (counted as a miss:
    /// ``lookup(packet:owner:)`` does not count, since a message it misses comes here next).
    func lookup(_ message: OSCMessageView, owner: Int) -> UnsafePointer<AddressResolution>? {
        guard let (resolution, _) = lookup(packet: message.bytes, owner: owner) else {
            state[1] &+= 1
            return nil
        }
        return resolution
    }

    /// Remembers that `message`'s address resolved to `resolution` for translator `owner`.
    func insert(_ message: OSCMessageView, _ resolution: AddressResolution, owner: Int) {
        // The key: the address with the NUL padding after it, a whole number of 4-byte words
        // (the padding cannot be confused with the address, which has no NUL).
        let key = OSCWriter.padded(message.address.count + 1)
        guard key <= Self.maximumAddressLength, state[0] == owner, let base = message.bytes.baseAddress else { return }
        // Hashed as `lookup(packet:owner:)` hashes it: 8 bytes at a time, a last 4 alone.
        var hash = Self.seed
        var offset = 0
        while offset < key {
            hash = Self.mix(
                hash,
                key - offset >= 8
                    ? UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                    : UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))))
            offset += 8
        }
        let final = Self.finish(hash)
        // An empty slot of the set, else the set's next victim.
        let first = Self.slot(final, capacity) & ~(ways - 1)
        var slot = first
        while slot < first + ways, hashes[slot] != 0 { slot += 1 }
        if slot == first + ways {
            let set = first / ways
            slot = first + Int(victims[set])
            victims[set] = UInt8(truncatingIfNeeded: (Int(victims[set]) + 1) % ways)
            state[2] &+= 1
        }
        (keys + slot * Self.maximumAddressLength).copyMemory(from: base, byteCount: key)
        lengths[slot] = key
        resolutions[slot] = resolution
        hashes[slot] = final
    }

    // A 64-bit hash of the key's 8-byte chunks, taken one chunk at a time so that finding the
    // address's end and hashing it are one pass: one multiply per chunk, the high bits folded in
    // at the end; never 0, which marks an empty slot. Collisions cost a miss, never a wrong
    // answer (keys are compared).
    private static var seed: UInt64 { 0x9E37_79B9_7F4A_7C15 }

    @inline(__always)
    private static func mix(_ hash: UInt64, _ chunk: UInt64) -> UInt64 {
        (hash ^ chunk) &* 0xFF51_AFD7_ED55_8CCD
    }

    @inline(__always)
    private static func finish(_ hash: UInt64) -> UInt64 { (hash ^ hash >> 32) | 1 }

    @inline(__always)
    private static func slot(_ hash: UInt64, _ capacity: Int) -> Int {
        Int(truncatingIfNeeded: hash ^ hash >> 29) & (capacity - 1)
    }

    /// Whether `count` bytes (a multiple of 4) at `bytes` and `key` are equal.
    @inline(__always)
    private static func equal(_ bytes: UnsafeRawPointer, _ key: UnsafeRawPointer, count: Int) -> Bool {
        var i = 0
        while i + 8 <= count {
            if bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                != key.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            {
                return false
            }
            i += 8
        }
        if i < count {
            return bytes.loadUnaligned(fromByteOffset: i, as: UInt32.self)
                == key.loadUnaligned(fromByteOffset: i, as: UInt32.self)
        }
        return true
    }
}
