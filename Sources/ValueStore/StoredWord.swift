/// How a value is kept in a slot's one word, so that "never set" and "set to 0" differ and a
/// reader on another thread gets key and value from one atomic load.
///
/// `0` is no value. A set word has bit 31 and the payload: the 14-bit value in bits 0-13 and,
/// in a last word, the key (controller, note or 14-bit parameter number) in bits 14-27.
/// A fresh table is all zeros, so it starts empty without a pass to mark it so.
enum StoredWord {
    static let none: UInt32 = 0
    static let hasValue: UInt32 = 1 << 31

    static func value(_ value: Int32) -> UInt32 {
        hasValue | UInt32(truncatingIfNeeded: value) & 0x3FFF
    }

    static func keyed(_ key: UInt16, _ value: Int32) -> UInt32 {
        hasValue | UInt32(key & 0x3FFF) << 14 | UInt32(truncatingIfNeeded: value) & 0x3FFF
    }

    static func isSet(_ word: UInt32) -> Bool { word & hasValue != 0 }
    static func value(of word: UInt32) -> Int32 { Int32(word & 0x3FFF) }
    static func key(of word: UInt32) -> UInt16 { UInt16(truncatingIfNeeded: word >> 14) & 0x3FFF }
}

/// A 14-bit value kept in range: what arrives from a route is assembled already, but an event
/// made by hand may not be.
@inline(__always)
func clamp14(_ value: Int32) -> Int32 { max(0, min(value, 16383)) }
