import MIDI
import OSC
import OSCMapping

/// TouchOSC Bridge's `/midi ,m`, in either byte order (`/sysex ,b` is ``sysexBlob(_:outputs:_:_:)``).
extension OSCToMIDITranslator {
    package func translateTouchOSCMIDI(_ message: OSCMessageView, _ timestamp: UInt64, _ sink: (MIDIEvent) -> Void)
        -> Outcome
    {
        guard message.argumentCount > 0 else { return .malformed }
        var sent = false
        var outcome = Outcome.malformed
        for argument in message.arguments {
            guard case .midi(let port, let byte1, let byte2, let byte3) = argument else { return .malformed }
            // TouchOSC puts the status last, OSC 1.0 second; only a status byte has its top bit set.
            let status: UInt8
            let data1 = byte2
            let data2: UInt8
            if byte3 & 0x80 != 0 {
                (status, data2) = (byte3, byte1)
            } else if byte1 & 0x80 != 0 {
                (status, data2) = (byte1, byte3)
            } else {
                return .malformed
            }
            let length = MIDIEvent.messageLength(status: status)
            guard length > 0 else { return .malformed }
            guard Int(port) < outputNames.count else {
                if !sent { outcome = .unknownAddress }
                continue
            }
            var parser = MIDIByteParser(store: nil, port: UInt16(port))
            let bytes = (status, data1 & 0x7F, data2 & 0x7F)
            withUnsafeBytes(of: bytes) { raw in
                parser.parse(UnsafeRawBufferPointer(rebasing: raw[0..<length]), timestamp: timestamp) { event in
                    sent = true
                    sink(event)
                }
            }
        }
        return sent ? .translated : outcome
    }
}
