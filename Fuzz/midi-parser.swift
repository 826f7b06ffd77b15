// libFuzzer target: a raw MIDI byte stream through MIDIByteParser, fed in chunks of random
// sizes (chosen by the input's first byte, so a run is reproducible).
//
// Checks: every event is well-formed (channel, 7-bit data, value ranges, SysEx framed by F0 and
// F7 with 7-bit bytes inside); chunked parsing gives the same events as one whole buffer; every
// channel or system event re-encodes with MIDIByteEncoder and parses back to itself; and once
// every SysEx is released and the parser reset, no store slot is left in flight.
@testable import MIDI

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    var random = SplitMix64(seed: UInt64(data[0]))
    let stream = UnsafeRawBufferPointer(start: data + 1, count: size - 1)

    let whole = parse(stream) { remaining in remaining }
    let chunked = parse(stream) { remaining in 1 + Int(random.next() % UInt64(min(remaining, 17))) }
    guard whole == chunked else { fatalError("chunked parsing differs: \(whole) vs \(chunked)") }

    var encoder = MIDIByteEncoder()
    for parsed in whole where parsed.event.kind != .sysex {
        var parser = MIDIByteParser(port: 3)
        let bytes = encoder.encode(parsed.event)
        let back = parser.parse(bytes, timestamp: 42)
        guard back == [parsed.event] else { fatalError("\(parsed) re-encodes as \(bytes) and parses as \(back)") }
    }
    return 0
}

/// An event as the parser reported it, with SysEx bytes copied out of the store.
struct Parsed: Equatable, CustomStringConvertible {
    var event: MIDIEvent
    var sysex: [UInt8]
    var description: String { "\(event.kind) \(event.channel) \(event.data1) \(event.data2) \(event.value) \(sysex)" }
}

func parse(_ stream: UnsafeRawBufferPointer, chunk: (Int) -> Int) -> [Parsed] {
    let store = SysExStore(slots: 4, capacity: 48)
    var parser = MIDIByteParser(store: store, port: 3)
    var events: [Parsed] = []
    var offset = 0
    while offset < stream.count {
        let count = chunk(stream.count - offset)
        parser.parse(UnsafeRawBufferPointer(rebasing: stream[offset..<offset + count]), timestamp: 42) { event in
            check(event, store)
            var bytes: [UInt8] = []
            if event.kind == .sysex {
                bytes = store.withBytes(event.sysex) { Array($0) }
                store.release(event.sysex)
            }
            var copy = event
            copy.sysex = .none
            events.append(Parsed(event: copy, sysex: bytes))
        }
        offset += count
    }
    parser.reset()
    // Every slot must be free again: a leaked one would drop every later SysEx for good.
    var drafts: [SysExDraft] = []
    for _ in 0..<store.slotCount {
        guard let draft = store.reserve() else { fatalError("a SysEx slot leaked") }
        drafts.append(draft)
    }
    for draft in drafts { store.abandon(draft) }
    return events
}

func check(_ event: MIDIEvent, _ store: SysExStore) {
    func fail(_ why: String) -> Never { fatalError("\(why): \(event)") }
    if event.port != 3 || event.timestamp != 42 { fail("port or timestamp lost") }
    if event.channel > 15 { fail("channel out of range") }
    if event.kind.isChannelMessage && (event.data1 > 127 || event.data2 > 127) { fail("data byte above 127") }
    switch event.kind {
    case .pitchBend: if !(-8192...8191).contains(event.value) { fail("pitch bend out of range") }
    case .songPosition: if !(0...16383).contains(event.value) { fail("song position out of range") }
    case .mtcQuarterFrame, .songSelect: if event.data1 > 127 { fail("data byte above 127") }
    case .controlChange14, .rpn, .nrpn: fail("the byte parser assembled a controller")
    case .sysex:
        store.withBytes(event.sysex) { bytes in
            guard bytes.count >= 2, bytes.first == 0xF0, bytes.last == 0xF7, bytes.count <= store.slotCapacity else {
                fail("SysEx not framed by F0 ... F7: \(Array(bytes))")
            }
            if bytes.dropFirst().dropLast().contains(where: { $0 >= 0x80 }) { fail("status byte inside SysEx") }
        }
    default: break
    }
}
