/// OSC 1.0 stream framing of one packet, as a test sender writes it: its length as a 32-bit
/// big-endian integer, then the packet.
package func lengthPrefixed(_ packet: [UInt8]) -> [UInt8] {
    let size = UInt32(packet.count)
    return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: size >> $0) } + packet
}

/// OSC 1.1 (RFC 1055 SLIP) framing of one packet: escaped, END after it, and before it too when
/// `doubleEnd`.
package func slipFramed(_ packet: [UInt8], doubleEnd: Bool = true) -> [UInt8] {
    var bytes: [UInt8] = doubleEnd ? [0xC0] : []
    for byte in packet {
        switch byte {
        case 0xC0: bytes += [0xDB, 0xDC]
        case 0xDB: bytes += [0xDB, 0xDD]
        default: bytes.append(byte)
        }
    }
    return bytes + [0xC0]
}
