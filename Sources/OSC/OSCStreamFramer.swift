/// Frames OSC packets for a stream transport: what ``OSCStreamDeframer`` reads back.
extension OSCStreamFraming {
    /// The most bytes `packetSize` bytes take once framed: a 4-byte length prefix, or for SLIP
    /// every byte escaped between two END bytes (OSC 1.1's double-END form).
    package func maximumFramedSize(of packetSize: Int) -> Int {
        switch self {
        case .lengthPrefixed: 4 + packetSize
        case .slip: 2 + 2 * packetSize
        }
    }

    /// Writes `packet` framed into `buffer`, which holds at least
    /// ``maximumFramedSize(of:)`` bytes; returns the bytes written.
    package func frame(_ packet: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawPointer) -> Int {
        switch self {
        case .lengthPrefixed:
            let size = UInt32(packet.count).bigEndian
            withUnsafeBytes(of: size) { buffer.copyMemory(from: $0.baseAddress!, byteCount: 4) }
            if let source = packet.baseAddress { (buffer + 4).copyMemory(from: source, byteCount: packet.count) }
            return 4 + packet.count
        case .slip:
            typealias SLIP = OSCStreamDeframer.SLIP
            let out = buffer.assumingMemoryBound(to: UInt8.self)
            // END first as well as last: a receiver that joined mid-stream, or saw line noise,
            // starts clean at the next packet.
            out[0] = SLIP.end
            var written = 1
            for byte in packet {
                switch byte {
                case SLIP.end:
                    out[written] = SLIP.escape
                    out[written + 1] = SLIP.escapedEnd
                    written += 2
                case SLIP.escape:
                    out[written] = SLIP.escape
                    out[written + 1] = SLIP.escapedEscape
                    written += 2
                default:
                    out[written] = byte
                    written += 1
                }
            }
            out[written] = SLIP.end
            return written + 1
        }
    }
}
