/// How packets are delimited on a stream transport (TCP), where there are no datagrams.
package enum OSCStreamFraming: Sendable, Equatable {
    /// OSC 1.0: each packet follows its size as a big-endian int32 (liblo's default over TCP).
    case lengthPrefixed
    /// OSC 1.1: each packet is SLIP-encoded (RFC 1055) and ends with an END byte, `0xC0`;
    /// double-END senders also put one before it (liblo with `lo_address_set_stream_slip`).
    case slip
}

/// Why an OSC stream cannot be read further; the connection carrying it should be closed.
package enum OSCStreamError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The first byte announces neither framing: not `0x00` (a length prefix), not END and
    /// not the `/` or `#` a SLIP packet without a leading END starts with.
    case unknownFraming(firstByte: UInt8)
    /// A length prefix that is not a whole number of 4-byte words.
    case badLength(UInt32)
    /// A packet longer than the deframer's capacity: a length prefix's announced size, or for
    /// SLIP the size the packet had reached when it passed the limit.
    case oversized(Int)
    /// A SLIP ESC followed by something other than ESC_END or ESC_ESC.
    case badEscape(UInt8)
    /// The stream ended in the middle of a packet.
    case truncated

    package var description: String {
        switch self {
        case .unknownFraming(let byte):
            "the stream starts with byte \(byte), neither an OSC 1.0 length prefix (0) nor SLIP (192, '/' or '#')"
        case .badLength(let size): "a length prefix of \(size) bytes, not a multiple of 4"
        case .oversized(let size): "a packet of \(size) bytes or more, over the size limit"
        case .badEscape(let byte): "a SLIP escape followed by byte \(byte) (only 220 and 221 may follow it)"
        case .truncated: "the stream ended in the middle of a packet"
        }
    }
}

/// Splits a byte stream into OSC packets, whichever framing the stream uses, in bounded memory.
///
/// The framing is decided by the stream's first byte: `0x00` is the high byte of an OSC 1.0
/// length prefix (any size up to 16 MiB); `0xC0` (END) starts a double-END SLIP stream, and
/// `/` or `#` a SLIP stream whose packets only end with END, as liblo 0.31 sends. Bytes may
/// arrive split anywhere; a packet is assembled in a caller-owned buffer of ``capacity`` bytes
/// and handed on whole, so nothing is allocated however the stream is cut. After an error the
/// stream is out of step and the deframer refuses everything; the caller closes the connection.
package struct OSCStreamDeframer: Sendable {
    /// SLIP's special bytes (RFC 1055).
    enum SLIP {
        static let end: UInt8 = 0xC0
        static let escape: UInt8 = 0xDB
        static let escapedEnd: UInt8 = 0xDC
        static let escapedEscape: UInt8 = 0xDD
    }

    /// The largest packet accepted; the buffer passed to ``feed(_:into:_:)`` holds this many bytes.
    package let capacity: Int
    /// The stream's framing, known from its first byte.
    package private(set) var framing: OSCStreamFraming?
    /// The error that stopped the stream, if one did.
    private(set) var error: OSCStreamError?

    // Bytes of the current packet in the buffer so far.
    private var filled = 0
    // Length prefix: the packet size once all four header bytes are in, else -1, with the
    // header bytes seen so far accumulated in `header`.
    private var expected = -1
    private var header: UInt32 = 0
    private var headerBytes = 0
    // SLIP: the previous byte was ESC.
    private var escaping = false

    package init(capacity: Int) {
        precondition(capacity >= 4, "OSCStreamDeframer: capacity too small")
        self.capacity = capacity
    }

    /// Whether part of a packet has arrived but not its end (at the end of the stream, this
    /// packet is lost: ``finish()`` says so).
    package var hasPartialPacket: Bool { filled > 0 || headerBytes > 0 || escaping }

    /// Reads `bytes`, assembling packets in `buffer` (``capacity`` bytes, kept by the caller
    /// from one call to the next) and handing each complete one to `packet` (valid only during
    /// the call). Returns the error that ends the stream, or nil; after an error nothing more
    /// is read.
    package mutating func feed(
        _ bytes: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawPointer,
        _ packet: (UnsafeRawBufferPointer) -> Void
    ) -> OSCStreamError? {
        if let error { return error }
        guard !bytes.isEmpty else { return nil }
        if framing == nil {
            switch bytes[0] {
            case 0: framing = .lengthPrefixed
            case SLIP.end, UInt8(ascii: "/"), UInt8(ascii: "#"): framing = .slip
            default:
                error = .unknownFraming(firstByte: bytes[0])
                return error
            }
        }
        error = framing == .slip ? feedSLIP(bytes, buffer, packet) : feedLengthPrefixed(bytes, buffer, packet)
        return error
    }

    /// At the end of the stream: ``OSCStreamError/truncated`` if a packet was cut off, else the
    /// error that stopped the stream earlier, if any.
    package func finish() -> OSCStreamError? {
        error ?? (hasPartialPacket ? .truncated : nil)
    }

    private mutating func feedLengthPrefixed(
        _ bytes: UnsafeRawBufferPointer, _ buffer: UnsafeMutableRawPointer, _ packet: (UnsafeRawBufferPointer) -> Void
    ) -> OSCStreamError? {
        var index = 0
        while index < bytes.count {
            if expected < 0 {
                header = header << 8 | UInt32(bytes[index])
                headerBytes += 1
                index += 1
                guard headerBytes == 4 else { continue }
                let size = header
                header = 0
                headerBytes = 0
                guard size % 4 == 0 else { return .badLength(size) }
                guard Int(size) <= capacity else { return .oversized(Int(size)) }
                // An empty frame carries no packet; skip it as SLIP skips END END.
                if size > 0 { expected = Int(size) }
                continue
            }
            let count = min(expected - filled, bytes.count - index)
            (buffer + filled).copyMemory(from: bytes.baseAddress! + index, byteCount: count)
            filled += count
            index += count
            if filled == expected {
                packet(UnsafeRawBufferPointer(start: buffer, count: filled))
                filled = 0
                expected = -1
            }
        }
        return nil
    }

    private mutating func feedSLIP(
        _ bytes: UnsafeRawBufferPointer, _ buffer: UnsafeMutableRawPointer, _ packet: (UnsafeRawBufferPointer) -> Void
    ) -> OSCStreamError? {
        // Locals in the loop, written back once: `self` is `inout` here, and the loop runs per byte.
        var filled = self.filled
        var escaping = self.escaping
        defer {
            self.filled = filled
            self.escaping = escaping
        }
        var index = 0
        while index < bytes.count {
            var byte = bytes[index]
            index += 1
            if escaping {
                escaping = false
                switch byte {
                case SLIP.escapedEnd: byte = SLIP.end
                case SLIP.escapedEscape: byte = SLIP.escape
                default: return .badEscape(byte)
                }
            } else if byte == SLIP.end {
                // A leading END, or the second of a double END, delimits an empty packet: nothing to hand on.
                if filled > 0 {
                    packet(UnsafeRawBufferPointer(start: buffer, count: filled))
                    filled = 0
                }
                continue
            } else if byte == SLIP.escape {
                escaping = true
                continue
            }
            guard filled < capacity else { return .oversized(filled + 1) }
            buffer.storeBytes(of: byte, toByteOffset: filled, as: UInt8.self)
            filled += 1
        }
        return nil
    }
}
