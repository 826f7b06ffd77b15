import MIDI
import OSC
import OSCMapping

/// Messages that carry MIDI bytes: a SysEx blob (every dialect has one) and o2m's raw byte stream.
extension OSCToMIDITranslator {
    package func sysexBlob(
        _ message: OSCMessageView, outputs: OutputSet, _ timestamp: UInt64, _ sink: (MIDIEvent) -> Void
    ) -> Outcome {
        guard message.argumentCount == 1, case .blob(let bytes)? = message.arguments.first(where: { _ in true }),
            bytes.count >= 2, bytes[0] == 0xF0, bytes[bytes.count - 1] == 0xF7
        else { return .malformed }
        // Only the framing bytes may have the top bit set.
        var i = 1
        while i < bytes.count - 1 {
            if bytes[i] & 0x80 != 0 { return .malformed }
            i += 1
        }
        guard let sysex else { return .sysexDisabled }
        var sent = false
        var port = 0
        while port < outputNames.count {
            if outputs.contains(port) {
                guard let reference = sysex.store(bytes) else { return sent ? .translated : .sysexDropped }
                sink(MIDIEvent(.sysex, sysex: reference, port: UInt16(port), timestamp: timestamp))
                sent = true
            }
            port += 1
        }
        return sent ? .translated : .unknownAddress
    }

    /// Parses a MIDI byte stream for every output in `outputs` (each gets its own SysEx slot).
    package func parseMIDI(
        _ bytes: UnsafeRawBufferPointer, outputs: OutputSet, _ timestamp: UInt64, _ sink: (MIDIEvent) -> Void
    ) -> Outcome {
        var sent = false
        var refused = false
        var dropped = false
        var port = 0
        while port < outputNames.count {
            if outputs.contains(port) {
                let storeDrops = sysex?.droppedCount ?? 0
                var parser = MIDIByteParser(store: sysex, port: UInt16(port))
                parser.parse(bytes, timestamp: timestamp) { event in
                    sent = true
                    sink(event)
                }
                if parser.counters.unstoredSysEx > 0 { refused = true }
                if let sysex, sysex.droppedCount != storeDrops { dropped = true }
            }
            port += 1
        }
        if refused { return .sysexDisabled }
        if dropped { return .sysexDropped }
        return sent ? .translated : .malformed
    }
}
