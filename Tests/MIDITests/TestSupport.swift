import MIDI

/// Feeds `bytes` to `parser` in chunks of `chunkSize` and collects the events.
func parse(_ bytes: [UInt8], chunkSize: Int, with parser: inout MIDIByteParser) -> [MIDIEvent] {
    var events: [MIDIEvent] = []
    var start = 0
    while start < bytes.count {
        let end = min(start + chunkSize, bytes.count)
        bytes[start..<end].withUnsafeBytes { chunk in
            parser.parse(chunk) { events.append($0) }
        }
        start = end
    }
    return events
}

/// The bytes of a SysEx event, copied out of the store.
func sysexBytes(of event: MIDIEvent, in store: SysExStore) -> [UInt8] {
    store.withBytes(event.sysex) { Array($0) }
}

/// A SysEx message `F0 ... F7` of `length` bytes in all, its data a pattern that shows shifts.
func sysexMessage(length: Int, seed: Int = 0) -> [UInt8] {
    var message = [UInt8](repeating: 0xF0, count: length)
    var k = 1
    while k < length - 1 {
        message[k] = sysexPatternByte(seed: seed, at: k)
        k += 1
    }
    message[length - 1] = 0xF7
    return message
}

/// Byte `k` of the data pattern of ``sysexMessage(length:seed:)``.
func sysexPatternByte(seed: Int, at k: Int) -> UInt8 {
    UInt8((seed &+ k &* 31) & 0x7F)
}
