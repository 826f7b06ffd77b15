import Storage

/// Turns ``MIDIEvent``s into MIDI 1.0 wire bytes, in a buffer the caller owns.
///
/// The assembled kinds go out as the control changes a MIDI 1.0 receiver understands:
/// - ``MIDIEventKind/controlChange14``: CC *n* (MSB), then CC *n*+32 (LSB);
/// - ``MIDIEventKind/rpn``: CC 101, 100 (parameter MSB, LSB), then 6, 38 (value MSB, LSB);
/// - ``MIDIEventKind/nrpn``: CC 99, 98, then 6, 38.
///
/// Data bytes are masked to 7 bits and pitch bend clamped, so the output is always valid MIDI.
/// Running status is off by default: some receivers mishandle it, and it only pays on slow links.
package struct MIDIByteEncoder {
    /// Where SysEx events' bytes are read from; without it, SysEx events cannot be encoded.
    /// The encoder never releases a slot: that stays the consumer's job.
    package var store: SysExStore?
    /// Whether a channel message omits its status byte when it repeats the previous one.
    var usesRunningStatus: Bool {
        didSet { runningStatus = 0 }
    }

    /// The most bytes an event other than SysEx encodes to (an RPN: four control changes).
    package static let maximumNonSysExLength = 12

    private var runningStatus: UInt8 = 0

    /// An encoder reading SysEx from `store`.
    package init(store: SysExStore? = nil, usesRunningStatus: Bool = false) {
        self.store = store
        self.usesRunningStatus = usesRunningStatus
    }

    /// Forgets the last status sent, so the next channel message carries its status byte
    /// (after a port reopens, or when another writer may have sent in between).
    mutating func resetRunningStatus() {
        runningStatus = 0
    }

    /// Writes `event` into `buffer` and returns the byte count; returns 0, writing nothing, when
    /// the buffer is too small, or for a SysEx event whose bytes are not in ``store``.
    package mutating func encode(_ event: MIDIEvent, into buffer: UnsafeMutableRawBufferPointer)
        -> Int
    {
        if event.kind == .sysex {
            return encodeSysEx(event.sysex, into: buffer)
        }
        var bytes = Scratch(runningStatus: runningStatus, usesRunningStatus: usesRunningStatus)
        bytes.write(event)
        guard bytes.count <= buffer.count else { return 0 }
        var i = 0
        while i < bytes.count {
            buffer[i] = bytes.bytes[i]
            i += 1
        }
        runningStatus = bytes.runningStatus
        return bytes.count
    }

    /// Encodes one event into a new array: for tests and the command line, not the hot path.
    package mutating func encode(_ event: MIDIEvent) -> [UInt8] {
        var length = Self.maximumNonSysExLength
        if event.kind == .sysex {
            // Never trust a reference's length for an allocation: the store bounds it.
            length = min(Int(event.sysex.length), store?.slotCapacity ?? 0)
        }
        return [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
            count = encode(event, into: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    private mutating func encodeSysEx(
        _ reference: SysExReference, into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        guard let store else { return 0 }
        let count = store.withBytes(reference) { message -> Int in
            guard message.count <= buffer.count, let source = message.baseAddress else { return 0 }
            buffer.baseAddress!.copyMemory(from: source, byteCount: message.count)
            return message.count
        }
        // System exclusive cancels running status at the receiver too.
        if count > 0 { runningStatus = 0 }
        return count
    }
}

/// The bytes of one non-SysEx event, built on the stack before the caller's buffer is checked.
private struct Scratch {
    var bytes = TupleArray12<UInt8>(repeating: 0)
    var count = 0
    var runningStatus: UInt8
    let usesRunningStatus: Bool

    package init(runningStatus: UInt8, usesRunningStatus: Bool) {
        self.runningStatus = runningStatus
        self.usesRunningStatus = usesRunningStatus
    }

    mutating func write(_ event: MIDIEvent) {
        let status = event.statusByte
        switch event.kind {
        case .controlChange14:
            let controller = UInt8(truncatingIfNeeded: event.parameter) & 0x1F
            let value = event.wireValue14
            channelMessage(status, controller, msb(value))
            channelMessage(status, controller + 32, lsb(value))
        case .rpn: parameter(status, selectMSB: 101, selectLSB: 100, event)
        case .nrpn: parameter(status, selectMSB: 99, selectLSB: 98, event)
        case .sysex: break  // encoded from the store by the encoder itself
        default:
            if event.kind.isRealtime {
                // Realtime bytes may go anywhere and leave running status alone.
                append(status)
                return
            }
            if status >= 0xF0 {
                // System common messages cancel running status at the receiver, so they cancel ours.
                runningStatus = 0
                append(status)
            } else {
                writeStatus(status)
            }
            let count = event.kind.dataByteCount
            if count >= 1 { append(event.wireData1) }
            if count >= 2 { append(event.wireData2) }
        }
    }

    private mutating func parameter(_ status: UInt8, selectMSB: UInt8, selectLSB: UInt8, _ event: MIDIEvent) {
        let number = event.parameter & 0x3FFF
        let value = event.wireValue14
        channelMessage(status, selectMSB, msb(number))
        channelMessage(status, selectLSB, lsb(number))
        channelMessage(status, 6, msb(value))
        channelMessage(status, 38, lsb(value))
    }

    private mutating func channelMessage(_ status: UInt8, _ data1: UInt8, _ data2: UInt8) {
        writeStatus(status)
        append(data1 & 0x7F)
        append(data2 & 0x7F)
    }

    private mutating func writeStatus(_ status: UInt8) {
        if usesRunningStatus && status == runningStatus { return }
        append(status)
        runningStatus = status
    }

    @inline(__always)
    private mutating func append(_ byte: UInt8) {
        bytes[count] = byte
        count += 1
    }
}

@inline(__always)
private func msb(_ value: UInt16) -> UInt8 { UInt8(truncatingIfNeeded: value >> 7) & 0x7F }

@inline(__always)
private func lsb(_ value: UInt16) -> UInt8 { UInt8(truncatingIfNeeded: value) & 0x7F }
