/// Turns a MIDI 1.0 byte stream (a raw MIDI port, a file, an OSC blob) into ``MIDIEvent``s.
///
/// Feed it chunks of any size; a message may be split anywhere between chunks. The parser keeps
/// running status, emits realtime bytes (`F8`-`FF`) the moment they arrive without disturbing
/// the message they interrupt, and writes SysEx into a ``SysExStore``.
///
/// What it does with bad input, never trapping or throwing:
/// - a data byte with no status to belong to is ignored and counted (``Counters/strayDataBytes``);
/// - `F4`, `F5`, `F9`, `FD` and a lone `F7` are ignored and counted
///   (``Counters/undefinedStatusBytes``); `F4`, `F5` and `F7` also cancel running status, as
///   every system common status does;
/// - a status byte other than realtime or `F7` arriving inside SysEx ends the SysEx, which is
///   dropped, not emitted truncated (``Counters/interruptedSysEx``), and then starts its own
///   message, as most parsers do;
/// - SysEx with no free slot or too long for one is dropped and counted by the store.
///
/// Note-on with velocity 0 stays a note-on: normalising it is a pipeline operator's job.
package struct MIDIByteParser {
    /// What the parser has ignored or dropped, for metrics.
    package struct Counters: Hashable, Sendable {
        /// Data bytes that arrived with no status byte to belong to.
        package var strayDataBytes = 0
        /// Undefined status bytes (`F4`, `F5`, `F9`, `FD`) and `F7` outside SysEx.
        package var undefinedStatusBytes = 0
        /// SysEx messages cut short by a status byte, and dropped.
        package var interruptedSysEx = 0
        /// SysEx messages dropped because the parser was made without a store.
        package var unstoredSysEx = 0

        package init() {}
    }

    /// Where SysEx bytes go; without a store, SysEx is dropped and counted.
    let store: SysExStore?
    /// Stamped into every event's ``MIDIEvent/port``.
    var port: UInt16
    /// What has been ignored or dropped so far.
    package private(set) var counters = Counters()

    // The status of the message being collected, kept after a channel message completes
    // (running status) and cleared after a system common one; 0 when there is none.
    private var status: UInt8 = 0
    private var firstData: UInt8 = 0
    private var hasFirstData = false
    private var inSysEx = false
    // nil inside SysEx when the message is being skipped (no store, or no free slot).
    private var draft: SysExDraft?

    /// A parser writing SysEx into `store` and stamping events with `port`.
    package init(store: SysExStore? = nil, port: UInt16 = 0) {
        self.store = store
        self.port = port
    }

    /// Forgets any message in progress (and running status), as after a port reopens.
    package mutating func reset() {
        if let draft, let store { store.abandon(draft) }
        draft = nil
        inSysEx = false
        status = 0
        hasFirstData = false
    }

    /// Parses a chunk, calling `sink` for each complete event in wire order.
    package mutating func parse(
        _ bytes: UnsafeRawBufferPointer, timestamp: UInt64 = 0, into sink: (MIDIEvent) -> Void
    ) {
        let count = bytes.count
        var i = 0
        while i < count {
            let byte = bytes[i]
            if inSysEx && byte < 0x80 {
                // SysEx is where the long runs are: copy each run of data bytes in one go.
                var end = i + 1
                while end < count && bytes[end] < 0x80 { end += 1 }
                if draft != nil, let store {
                    store.append(UnsafeRawBufferPointer(rebasing: bytes[i..<end]), to: &draft!)
                }
                i = end
                continue
            }
            parse(byte, timestamp: timestamp, into: sink)
            i += 1
        }
    }

    /// Parses one byte, calling `sink` if it completes an event.
    @inline(__always)
    package mutating func parse(_ byte: UInt8, timestamp: UInt64 = 0, into sink: (MIDIEvent) -> Void) {
        if byte >= 0xF8 {
            realtime(byte, timestamp: timestamp, into: sink)
        } else if byte >= 0x80 {
            statusByte(byte, timestamp: timestamp, into: sink)
        } else {
            dataByte(byte, timestamp: timestamp, into: sink)
        }
    }

    /// Parses a whole buffer into an array: for tests and the command line, not the hot path.
    package mutating func parse(_ bytes: [UInt8], timestamp: UInt64 = 0) -> [MIDIEvent] {
        var events: [MIDIEvent] = []
        bytes.withUnsafeBytes { buffer in
            parse(buffer, timestamp: timestamp) { events.append($0) }
        }
        return events
    }

    // MARK: Byte classes

    @inline(__always)
    private mutating func realtime(_ byte: UInt8, timestamp: UInt64, into sink: (MIDIEvent) -> Void) {
        let kind: MIDIEventKind
        switch byte {
        case 0xF8: kind = .clock
        case 0xFA: kind = .start
        case 0xFB: kind = .continue
        case 0xFC: kind = .stop
        case 0xFE: kind = .activeSensing
        case 0xFF: kind = .reset
        default:  // F9, FD
            counters.undefinedStatusBytes += 1
            return
        }
        sink(MIDIEvent(kind, port: port, timestamp: timestamp))
    }

    private mutating func statusByte(
        _ byte: UInt8, timestamp: UInt64, into sink: (MIDIEvent) -> Void
    ) {
        if inSysEx {
            inSysEx = false
            if byte == 0xF7 {
                finishSysEx(timestamp: timestamp, into: sink)
                return
            }
            // A message being skipped (no store, no free slot) was counted when it began, so
            // each dropped message is counted once.
            if let message = draft, let store {
                store.abandon(message)
                counters.interruptedSysEx += 1
            }
            draft = nil
        }
        hasFirstData = false
        switch byte {
        case 0x80...0xEF, 0xF1, 0xF2, 0xF3:
            status = byte
        case 0xF0:
            status = 0
            inSysEx = true
            if let store {
                draft = store.reserve()
                if draft != nil { store.append(0xF0, to: &draft!) }
            } else {
                counters.unstoredSysEx += 1
            }
        case 0xF6:
            status = 0
            sink(MIDIEvent(.tuneRequest, port: port, timestamp: timestamp))
        default:  // F4, F5, and F7 outside SysEx
            status = 0
            counters.undefinedStatusBytes += 1
        }
    }

    private mutating func finishSysEx(timestamp: UInt64, into sink: (MIDIEvent) -> Void) {
        guard var message = draft, let store else { return }
        draft = nil
        store.append(0xF7, to: &message)
        if let reference = store.publish(message) {
            sink(MIDIEvent(.sysex, sysex: reference, port: port, timestamp: timestamp))
        }
    }

    @inline(__always)
    private mutating func dataByte(_ byte: UInt8, timestamp: UInt64, into sink: (MIDIEvent) -> Void) {
        if inSysEx {
            if draft != nil, let store { store.append(byte, to: &draft!) }
            return
        }
        guard status != 0 else {
            counters.strayDataBytes += 1
            return
        }
        let needsTwo: Bool
        switch status & 0xF0 {
        case 0xC0, 0xD0: needsTwo = false
        case 0xF0: needsTwo = status == 0xF2
        default: needsTwo = true
        }
        if needsTwo && !hasFirstData {
            firstData = byte
            hasFirstData = true
            return
        }
        hasFirstData = false
        let data1 = needsTwo ? firstData : byte
        let data2 = needsTwo ? byte : 0
        sink(event(status: status, data1, data2, timestamp: timestamp))
        // Running status applies to channel messages only.
        if status >= 0xF0 { status = 0 }
    }

    private func event(status: UInt8, _ data1: UInt8, _ data2: UInt8, timestamp: UInt64)
        -> MIDIEvent
    {
        let channel = status & 0x0F
        var event: MIDIEvent
        switch status & 0xF0 {
        case 0x80: event = .noteOff(channel: channel, note: data1, velocity: data2)
        case 0x90: event = .noteOn(channel: channel, note: data1, velocity: data2)
        case 0xA0: event = MIDIEvent(.polyPressure, channel: channel, data1: data1, data2: data2)
        case 0xB0: event = .controlChange(channel: channel, controller: data1, value: data2)
        case 0xC0: event = MIDIEvent(.programChange, channel: channel, data1: data1)
        case 0xD0: event = MIDIEvent(.channelPressure, channel: channel, data1: data1)
        case 0xE0: event = .pitchBend(channel: channel, bend: fourteenBit(data1, data2) - 8192)
        default:
            switch status {
            case 0xF1: event = MIDIEvent(.mtcQuarterFrame, data1: data1)
            case 0xF2: event = MIDIEvent(.songPosition, value: fourteenBit(data1, data2))
            default: event = MIDIEvent(.songSelect, data1: data1)
            }
        }
        event.port = port
        event.timestamp = timestamp
        return event
    }

    @inline(__always)
    private func fourteenBit(_ lsb: UInt8, _ msb: UInt8) -> Int32 {
        Int32(msb) << 7 | Int32(lsb)
    }
}
