import OSCMapping
/// The literal addresses a translator accepts, each with what it resolves to, found once when
/// the translator is built: an incoming literal address resolves with one hash lookup. The
/// addresses an input accepts are known when its config is read, so nothing is learnt (or
/// evicted) at run time.
///
/// An open-addressing table (linear probing, at most half full) over three arrays made once
/// and never changed: the slots, the address bytes they point into, and the resolutions.
/// Lookups read the message's address in place and allocate nothing.
struct OSCAddressTable: Sendable {
    /// The most addresses the table holds. The built-in families come first (256 outputs take
    /// 256 × 185 of them); each mapping rule then goes in whole or not at all, in order, while
    /// its addresses fit. What is left out resolves the general way, with the same outcome.
    static let maximumCount = 1 << 16

    /// A mapping rule whose captures would make more addresses than this goes to the general
    /// resolution instead: a capture ranges over the field it sets (a channel 16 values, a
    /// note 128, a 14-bit value 16,384), so two captures multiply quickly.
    static let maximumPerRule = 4096

    private struct Slot {
        /// The address's bytes are `bytes[start..<start + count]`; `count` 0 marks an empty slot
        /// (an OSC address is never empty).
        var start: UInt32 = 0
        var count: UInt32 = 0
        var hash: UInt32 = 0
        var resolution: UInt32 = 0
    }

    private let slots: [Slot]
    private let bytes: [UInt8]
    private let resolutions: [AddressResolution]
    /// `slots.count - 1`; the slot count is a power of two.
    private let mask: Int

    /// How many addresses the table holds.
    var count: Int { resolutions.count }

    /// The memory the table owns, in bytes.
    var byteCount: Int {
        slots.count * MemoryLayout<Slot>.stride + bytes.count
            + resolutions.count * MemoryLayout<AddressResolution>.stride
    }

    /// An empty table.
    init() {
        self.init([], resolve: { _ in AddressResolution() })
    }

    /// A table of `addresses`, each resolved by `resolve`; a repeated address is kept once.
    package init(_ addresses: [[UInt8]], resolve: (UnsafeRawBufferPointer) -> AddressResolution) {
        var capacity = 16
        while capacity < addresses.count * 2 { capacity <<= 1 }
        var slots = [Slot](repeating: Slot(), count: capacity)
        var bytes: [UInt8] = []
        var resolutions: [AddressResolution] = []
        let mask = capacity - 1
        for address in addresses where !address.isEmpty {
            address.withUnsafeBytes { key in
                let hash = Self.hash(key)
                var index = Int(hash) & mask
                while slots[index].count != 0 {
                    if Self.equal(slots[index], hash, key, bytes) { return }
                    index = (index + 1) & mask
                }
                slots[index] = Slot(
                    start: UInt32(bytes.count), count: UInt32(key.count), hash: hash,
                    resolution: UInt32(resolutions.count))
                bytes.append(contentsOf: key)
                resolutions.append(resolve(key))
            }
        }
        self.slots = slots
        self.bytes = bytes
        self.resolutions = resolutions
        self.mask = mask
    }

    /// What `address` resolves to, when the table holds it.
    func lookup(_ address: UnsafeRawBufferPointer) -> AddressResolution? {
        guard !address.isEmpty else { return nil }
        let hash = Self.hash(address)
        var index = Int(hash) & mask
        while slots[index].count != 0 {
            if Self.equal(slots[index], hash, address, bytes) { return resolutions[Int(slots[index].resolution)] }
            index = (index + 1) & mask
        }
        return nil
    }

    private static func equal(_ slot: Slot, _ hash: UInt32, _ key: UnsafeRawBufferPointer, _ bytes: [UInt8]) -> Bool {
        guard slot.hash == hash, Int(slot.count) == key.count else { return false }
        return bytes.withUnsafeBufferPointer { stored in
            var i = 0
            let start = Int(slot.start)
            while i < key.count {
                if stored[start + i] != key[i] { return false }
                i += 1
            }
            return true
        }
    }

    /// FNV-1a, 32 bits: addresses are short, and it mixes every byte.
    private static func hash(_ key: UnsafeRawBufferPointer) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        var i = 0
        while i < key.count {
            hash = (hash ^ UInt32(key[i])) &* 16_777_619
            i += 1
        }
        return hash
    }
}

extension OSCToMIDITranslator {
    /// Every literal address this translator accepts as it would be sent (port names as
    /// sanitised, channels without leading zeros, captures as plain decimals), up to
    /// ``OSCAddressTable/maximumCount``: the built-in families' addresses, osmid's commands to
    /// every port (`/*/note_on`, sent as these very bytes), then each mapping rule's that has
    /// no `*` and few enough capture values.
    package func literalAddresses() -> [[UInt8]] {
        var addresses: [[UInt8]] = []
        func add(_ parts: [UInt8]...) {
            addresses.append(parts.flatMap { [UInt8(ascii: "/")] + $0 })
        }
        let defaultTypes = [
            "note_on", "note_off", "poly_pressure", "cc", "program", "pressure", "pitch_bend", "cc14",
            "rpn", "nrpn",
        ]
        let defaultPortTypes = [
            "sysex", "clock", "start", "stop", "continue", "active_sensing", "reset",
            "tune_request", "mtc_quarter_frame", "song_select", "song_position",
        ]
        let osmidCommands = [
            "clock", "start", "stop", "continue", "active_sensing", "raw", "sysex", "note_on",
            "note_off", "control_change", "poly_pressure", "pitch_bend", "channel_pressure", "program_change",
        ]
        if acceptsTouchOSC {
            add(Array("midi".utf8))
            add(Array("sysex".utf8))
        }
        for name in outputNames where !name.isEmpty {
            if acceptsDefault {
                let midi = Array("midi".utf8)
                for type in defaultPortTypes { add(midi, name, Array(type.utf8)) }
                for channel in 1...16 {
                    for type in defaultTypes { add(midi, name, Array(String(channel).utf8), Array(type.utf8)) }
                }
            }
            if acceptsOsmid {
                for command in osmidCommands { add(name, Array(command.utf8)) }
            }
        }
        if acceptsOsmid && outputNames.contains(where: { !$0.isEmpty }) {
            // Sonic Pi's MIDI functions send to o2m's every port by default, as `/*/note_on` and
            // so on: the patterns a player's notes arrive as, resolved here once, like a name.
            for command in osmidCommands { add(Array("*".utf8), Array(command.utf8)) }
        }
        for rule in rules {
            guard let ruleAddresses = Self.literalAddresses(of: rule),
                addresses.count + ruleAddresses.count <= OSCAddressTable.maximumCount
            else { continue }
            addresses += ruleAddresses
        }
        return Array(addresses.prefix(OSCAddressTable.maximumCount))
    }

    /// The literal addresses `rule` matches with each capture in the range of the field it
    /// sets (or of its scale's input, when scaled; 0...127 when it sets none), or nil when the
    /// address has a `*` or those are more than ``OSCAddressTable/maximumPerRule``.
    package static func literalAddresses(of rule: OSCMappingRule) -> [[UInt8]]? {
        var ranges = [ClosedRange<Int>?](repeating: nil, count: rule.address.captureNames.count)
        let fields = OSCMappingRule.fields(for: rule.kind)
        for (i, value) in rule.values.enumerated() where i < fields.count {
            guard let value, case .capture(let index) = value.source, index < ranges.count else { continue }
            var range = fields[i].range
            if let scale = value.scale {
                let low = min(scale.inputFrom, scale.inputTo).rounded(.up)
                let high = max(scale.inputFrom, scale.inputTo).rounded(.down)
                guard low <= high, low >= -99_999, high <= 99_999 else { return nil }
                range = Int(low)...Int(high)
            }
            if let other = ranges[index] {
                range = min(range.lowerBound, other.lowerBound)...max(range.upperBound, other.upperBound)
            }
            ranges[index] = range
        }
        var total = 1
        for range in ranges {
            total *= (range ?? 0...127).count
            if total > OSCAddressTable.maximumPerRule { return nil }
        }
        var addresses: [[UInt8]] = [[]]
        for part in rule.address.parts {
            switch part {
            case .any:
                return nil
            case .literal(let bytes):
                addresses = addresses.map { $0 + [UInt8(ascii: "/")] + bytes }
            case .capture(let prefix, let index, let suffix):
                let values = ranges[index] ?? 0...127
                addresses = addresses.flatMap { address in
                    values.map { address + [UInt8(ascii: "/")] + prefix + Array(String($0).utf8) + suffix }
                }
            }
        }
        return addresses
    }
}
