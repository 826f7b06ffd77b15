import OSC

/// What recent OSC addresses resolved to, for ``OSCToMIDITranslator/translate(_:timestamp:cache:into:)``:
/// senders repeat a handful of addresses, so only the first message at an address runs the
/// mapping rules' matchers, the OSC pattern matcher and the name comparisons.
///
/// A fixed table allocated once: `capacity` slots, each chosen by a hash of the address bytes
/// and verified by comparing them, so a collision costs a miss and never a wrong answer. A new
/// address takes over its slot; an address longer than ``maximumAddressLength`` bytes is never
/// kept. Hostile senders cycling through addresses only make every message a miss, which costs
/// what translating did before the cache: lookups and inserts allocate nothing.
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
    private let hashes: UnsafeMutablePointer<UInt64>
    private let lengths: UnsafeMutablePointer<Int>
    private let keys: UnsafeMutableRawPointer
    private let resolutions: UnsafeMutablePointer<AddressResolution>
    /// The translator the entries belong to (0: none yet), and misses.
    private let state: UnsafeMutablePointer<Int>

    /// A cache of `capacity` slots (rounded up to a power of two).
    public init(capacity: Int = 256) {
        var slots = 1
        while slots < max(capacity, 1) { slots <<= 1 }
        self.capacity = slots
        hashes = .allocate(capacity: slots)
        hashes.initialize(repeating: 0, count: slots)
        lengths = .allocate(capacity: slots)
        lengths.initialize(repeating: 0, count: slots)
        keys = .allocate(byteCount: slots * Self.maximumAddressLength, alignment: 8)
        keys.initializeMemory(as: UInt8.self, repeating: 0, count: slots * Self.maximumAddressLength)
        resolutions = .allocate(capacity: slots)
        resolutions.initialize(repeating: AddressResolution(), count: slots)
        state = .allocate(capacity: 2)
        state.initialize(repeating: 0, count: 2)
    }

    deinit {
        hashes.deallocate()
        lengths.deallocate()
        keys.deallocate()
        resolutions.deallocate()
        state.deallocate()
    }

    /// Lookups that found nothing (first messages at an address, collisions, long addresses).
    public var misses: Int { state[1] }

    /// Forgets every address.
    public func removeAll() {
        hashes.update(repeating: 0, count: capacity)
    }

    /// The key of `message`'s address: its bytes with the NUL padding after them, read in
    /// place, a whole number of 4-byte words (the padding cannot be confused with the address,
    /// which has no NUL).
    private static func key(_ message: OSCMessageView) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: message.bytes[0..<OSCWriter.padded(message.address.count + 1)])
    }

    /// What `message`'s address resolved to for translator `owner`, or nil.
    func lookup(_ message: OSCMessageView, owner: Int) -> UnsafePointer<AddressResolution>? {
        if state[0] != owner {
            removeAll()
            state[0] = owner
        }
        let key = Self.key(message)
        let hash = Self.hash(key)
        let slot = Int(truncatingIfNeeded: hash) & (capacity - 1)
        guard hashes[slot] == hash, lengths[slot] == key.count,
            Self.equal(key, keys + slot * Self.maximumAddressLength)
        else {
            state[1] &+= 1
            return nil
        }
        return UnsafePointer(resolutions + slot)
    }

    /// Remembers that `message`'s address resolved to `resolution` for translator `owner`.
    func insert(_ message: OSCMessageView, _ resolution: AddressResolution, owner: Int) {
        let key = Self.key(message)
        guard key.count <= Self.maximumAddressLength, state[0] == owner, let base = key.baseAddress else { return }
        let hash = Self.hash(key)
        let slot = Int(truncatingIfNeeded: hash) & (capacity - 1)
        (keys + slot * Self.maximumAddressLength).copyMemory(from: base, byteCount: key.count)
        lengths[slot] = key.count
        resolutions[slot] = resolution
        hashes[slot] = hash
    }

    /// A 64-bit hash of the bytes, 8 and then 4 at a time; never 0, which marks an empty slot.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
        guard let base = bytes.baseAddress else { return hash | 1 }
        var i = 0
        while i + 8 <= bytes.count {
            hash = (hash ^ base.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            hash ^= hash >> 32
            i += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while i < bytes.count {
            if i + 4 <= bytes.count {
                tail = UInt64(base.loadUnaligned(fromByteOffset: i, as: UInt32.self))
                shift = 32
                i += 4
            } else {
                tail |= UInt64(base.load(fromByteOffset: i, as: UInt8.self)) << shift
                shift += 8
                i += 1
            }
        }
        hash = (hash ^ tail) &* 0xC4CE_B9FE_1A85_EC53
        hash ^= hash >> 29
        return hash | 1
    }

    private static func equal(_ bytes: UnsafeRawBufferPointer, _ key: UnsafeRawPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var i = 0
        while i + 8 <= bytes.count {
            if base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                != key.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            {
                return false
            }
            i += 8
        }
        if i + 4 <= bytes.count {
            if base.loadUnaligned(fromByteOffset: i, as: UInt32.self)
                != key.loadUnaligned(fromByteOffset: i, as: UInt32.self)
            {
                return false
            }
            i += 4
        }
        while i < bytes.count {
            if base.load(fromByteOffset: i, as: UInt8.self) != key.load(fromByteOffset: i, as: UInt8.self) {
                return false
            }
            i += 1
        }
        return true
    }
}
