import MIDI
import OSC

/// Turns MIDI events into OSC messages for one destination, without allocating.
///
/// Built once per destination from a scheme and the input ports' names: templates are compiled
/// to literal bytes and placeholders, port names sanitised to bytes. ``write(_:into:)`` then
/// renders the address on the stack and writes the message into the caller's ``OSCWriter``.
public struct OSCEventFormatter: Sendable {
    /// The scheme the formatter was built from.
    public let scheme: OSCScheme
    /// Where SysEx bytes are read; without it SysEx events are not sent. The formatter never
    /// releases a slot: that stays the consumer's job.
    public let sysex: SysExStore?

    // Indexed by `MIDIEventKind.rawValue`; nil: the scheme does not send that kind.
    private let table: [CompiledEntry?]
    // Indexed by `MIDIEvent.port`; a port past the end renders as its index.
    private let portNames: [[UInt8]]
    private let typeNames: [[UInt8]]
    // The longest address any event can render to, for the stack buffer.
    private let addressCapacity: Int

    private struct CompiledEntry: Sendable {
        var segments: [OSCAddressTemplate.Segment]
        var fields: [OSCArgumentField]
        var style: OSCArgumentStyle
        var usesDataBytes: Bool
    }

    /// A formatter for `scheme`; `portNames[i]` names the input port whose events have `port == i`.
    public init(scheme: OSCScheme, portNames: [String], sysex: SysExStore? = nil) {
        self.scheme = scheme
        self.sysex = sysex
        self.portNames = portNames.map { scheme.portNameStyle.sanitisedBytes($0) }
        self.typeNames = MIDIEventKind.allCases.map { Array($0.description.utf8) }
        let longestPort = max(self.portNames.map(\.count).max() ?? 0, 5)
        let longestType = typeNames.map(\.count).max() ?? 0
        var table = [CompiledEntry?](repeating: nil, count: MIDIEventKind.allCases.count)
        var capacity = 1
        for kind in MIDIEventKind.allCases {
            guard let entry = scheme[kind] else { continue }
            table[Int(kind.rawValue)] = CompiledEntry(
                segments: entry.address.segments, fields: entry.arguments, style: entry.style,
                usesDataBytes: entry.arguments.contains(.dataBytes))
            var length = 0
            for segment in entry.address.segments {
                switch segment {
                case .literal(let bytes): length += bytes.count
                case .placeholder(.port): length += longestPort
                case .placeholder(.type): length += longestType
                case .placeholder: length += 5  // the widest number, 65535
                }
            }
            capacity = max(capacity, length)
        }
        self.table = table
        self.addressCapacity = capacity
    }

    /// Appends the message for `event` to `writer`; `false` when the scheme does not send this
    /// kind, a SysEx event's bytes are not available, or the writer failed (buffer too small).
    ///
    /// The writer is not reset: call `reset()` between packets, or write several messages into
    /// one bundle.
    public func write(_ event: MIDIEvent, into writer: inout OSCWriter) -> Bool {
        let index = Int(event.kind.rawValue)
        guard index < table.count, let entry = table[index] else { return false }
        return withUnsafeTemporaryAllocation(byteCount: addressCapacity, alignment: 1) { buffer in
            let length = renderAddress(entry.segments, event, into: buffer)
            let address = UnsafeRawBufferPointer(rebasing: buffer[..<length])
            return writeMessage(entry, event, address: address, into: &writer)
        }
    }

    // MARK: Address

    private func renderAddress(
        _ segments: [OSCAddressTemplate.Segment], _ event: MIDIEvent, into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        var count = 0
        var i = 0
        while i < segments.count {
            switch segments[i] {
            case .literal(let bytes): Self.copy(bytes, into: buffer, at: &count)
            case .placeholder(let placeholder):
                switch placeholder {
                case .port:
                    let port = Int(event.port)
                    if port < portNames.count {
                        Self.copy(portNames[port], into: buffer, at: &count)
                    } else {
                        Self.writeDecimal(port, into: buffer, at: &count)
                    }
                case .id: Self.writeDecimal(Int(event.port), into: buffer, at: &count)
                case .channel: Self.writeDecimal(Int(event.channel & 0x0F) + 1, into: buffer, at: &count)
                case .channel0: Self.writeDecimal(Int(event.channel & 0x0F), into: buffer, at: &count)
                case .type: Self.copy(typeNames[Int(event.kind.rawValue)], into: buffer, at: &count)
                case .note: Self.writeDecimal(Int(event.data1 & 0x7F), into: buffer, at: &count)
                case .controller:
                    let controller = event.kind == .controlChange ? Int(event.data1 & 0x7F) : Int(event.parameter)
                    Self.writeDecimal(controller, into: buffer, at: &count)
                }
            }
            i += 1
        }
        return count
    }

    @inline(__always)
    private static func copy(_ bytes: [UInt8], into buffer: UnsafeMutableRawBufferPointer, at count: inout Int) {
        var i = 0
        while i < bytes.count {
            buffer[count + i] = bytes[i]
            i += 1
        }
        count += bytes.count
    }

    /// Writes `value` (0...99999) in decimal without building a string.
    @inline(__always)
    private static func writeDecimal(_ value: Int, into buffer: UnsafeMutableRawBufferPointer, at count: inout Int) {
        var divisor = 1
        while divisor * 10 <= value { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            buffer[count] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest / divisor)
            rest %= divisor
            divisor /= 10
            count += 1
        }
    }

    // MARK: Arguments

    private func writeMessage(
        _ entry: CompiledEntry, _ event: MIDIEvent, address: UnsafeRawBufferPointer, into writer: inout OSCWriter
    ) -> Bool {
        switch entry.style {
        case .int, .float:
            guard entry.usesDataBytes else {
                writeFields(entry, event, dataBytes: UnsafeRawBufferPointer(start: nil, count: 0), address, &writer)
                return writer.failure == nil
            }
            return withWireBytes(event) { message in
                // The data bytes: after the status byte, and for SysEx before the closing F7.
                var end = message.count
                if event.kind == .sysex, end > 1, message[end - 1] == 0xF7 { end -= 1 }
                let data = UnsafeRawBufferPointer(rebasing: message[min(1, end)..<end])
                writeFields(entry, event, dataBytes: data, address, &writer)
                return writer.failure == nil
            }
        case .midi, .touchOSCMIDI:
            switch event.kind {
            case .sysex, .controlChange14, .rpn, .nrpn: return false
            default: break
            }
            let byteCount = OSCArgumentField.dataByteCount(event.kind)
            let status = Self.status(event)
            let data1 = byteCount >= 1 ? Self.data1(event) : 0
            let data2 = byteCount >= 2 ? Self.data2(event) : 0
            let port = UInt8(truncatingIfNeeded: event.port)
            writer.beginMessage(address: address, argumentCount: 1)
            if entry.style == .midi {
                writer.append(midiPort: port, status: status, data1: data1, data2: data2)
            } else {
                writer.append(midiPort: port, status: data2, data1: data1, data2: status)
            }
            writer.endMessage()
            return writer.failure == nil
        case .blob:
            return withWireBytes(event) { message in
                writer.beginMessage(address: address, argumentCount: 1)
                writer.append(blob: message)
                writer.endMessage()
                return writer.failure == nil
            }
        }
    }

    private func writeFields(
        _ entry: CompiledEntry, _ event: MIDIEvent, dataBytes: UnsafeRawBufferPointer,
        _ address: UnsafeRawBufferPointer, _ writer: inout OSCWriter
    ) {
        let fields = entry.fields
        var argumentCount = 0
        var i = 0
        while i < fields.count {
            argumentCount += fields[i] == .dataBytes ? dataBytes.count : 1
            i += 1
        }
        writer.beginMessage(address: address, argumentCount: argumentCount)
        let isFloat = entry.style == .float
        i = 0
        while i < fields.count {
            let field = fields[i]
            if field == .dataBytes {
                var j = 0
                while j < dataBytes.count {
                    let byte = dataBytes[j] & 0x7F
                    if isFloat { writer.append(float32: Float(byte) / 127) } else { writer.append(int32: Int32(byte)) }
                    j += 1
                }
            } else if isFloat {
                writer.append(float32: Self.float(field, event))
            } else {
                writer.append(int32: Self.int(field, event))
            }
            i += 1
        }
        writer.endMessage()
    }

    /// Calls `body` with the event's MIDI bytes: a SysEx message from the store, anything else
    /// encoded on the stack. `false` when a SysEx event's bytes are not available.
    private func withWireBytes(_ event: MIDIEvent, _ body: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        if event.kind == .sysex {
            guard let sysex else { return false }
            return sysex.withBytes(event.sysex) { message in
                message.isEmpty ? false : body(message)
            }
        }
        return withUnsafeTemporaryAllocation(
            byteCount: MIDIByteEncoder.maximumNonSysExLength, alignment: 1
        ) { buffer in
            var encoder = MIDIByteEncoder()
            let count = encoder.encode(event, into: buffer)
            return body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
    }

    // MARK: Values

    private static func int(_ field: OSCArgumentField, _ event: MIDIEvent) -> Int32 {
        switch field {
        case .note, .program: Int32(event.data1 & 0x7F)
        case .velocity: Int32(event.data2 & 0x7F)
        case .pressure: Int32((event.kind == .polyPressure ? event.data2 : event.data1) & 0x7F)
        case .controller: event.kind == .controlChange ? Int32(event.data1 & 0x7F) : Int32(event.parameter)
        case .value:
            switch event.kind {
            case .pitchBend: Int32(clampedBend(event.value) + 8192)
            case .controlChange14, .rpn, .nrpn, .songPosition: Int32(clamped14(event.value))
            case .noteOn, .noteOff, .polyPressure, .controlChange: Int32(event.data2 & 0x7F)
            default: Int32(event.data1 & 0x7F)
            }
        case .bend: clampedBend(event.value)
        case .channel: Int32(event.channel & 0x0F) + 1
        case .channel0: Int32(event.channel & 0x0F)
        case .port: Int32(event.port)
        case .status: Int32(status(event))
        case .data1: Int32(data1(event))
        case .data2: Int32(data2(event))
        case .dataBytes: 0  // written byte by byte by the caller
        }
    }

    private static func float(_ field: OSCArgumentField, _ event: MIDIEvent) -> Float {
        switch field {
        case .velocity, .pressure, .data1, .data2: Float(int(field, event)) / 127
        case .value:
            switch event.kind {
            case .pitchBend, .controlChange14, .rpn, .nrpn, .songPosition: Float(int(field, event)) / 16383
            default: Float(int(field, event)) / 127
            }
        case .bend:
            // Asymmetric so that both ends are exactly ±1 and the centre exactly 0.
            event.value >= 0 ? Float(clampedBend(event.value)) / 8191 : Float(clampedBend(event.value)) / 8192
        case .note, .program, .controller, .channel, .channel0, .port, .status, .dataBytes:
            Float(int(field, event))
        }
    }

    private static func clampedBend(_ value: Int32) -> Int32 { min(max(value, -8192), 8191) }
    private static func clamped14(_ value: Int32) -> Int32 { min(max(value, 0), 16383) }

    private static func status(_ event: MIDIEvent) -> UInt8 {
        let channel = event.channel & 0x0F
        return switch event.kind {
        case .noteOff: 0x80 | channel
        case .noteOn: 0x90 | channel
        case .polyPressure: 0xA0 | channel
        case .controlChange, .controlChange14, .rpn, .nrpn: 0xB0 | channel
        case .programChange: 0xC0 | channel
        case .channelPressure: 0xD0 | channel
        case .pitchBend: 0xE0 | channel
        case .sysex: 0xF0
        case .mtcQuarterFrame: 0xF1
        case .songPosition: 0xF2
        case .songSelect: 0xF3
        case .tuneRequest: 0xF6
        case .clock: 0xF8
        case .start: 0xFA
        case .continue: 0xFB
        case .stop: 0xFC
        case .activeSensing: 0xFE
        case .reset: 0xFF
        }
    }

    /// The first data byte on the wire.
    private static func data1(_ event: MIDIEvent) -> UInt8 {
        switch event.kind {
        case .pitchBend: UInt8(truncatingIfNeeded: clampedBend(event.value) + 8192) & 0x7F
        case .songPosition: UInt8(truncatingIfNeeded: clamped14(event.value)) & 0x7F
        default: event.data1 & 0x7F
        }
    }

    /// The second data byte on the wire.
    private static func data2(_ event: MIDIEvent) -> UInt8 {
        switch event.kind {
        case .pitchBend: UInt8(truncatingIfNeeded: (clampedBend(event.value) + 8192) >> 7)
        case .songPosition: UInt8(truncatingIfNeeded: clamped14(event.value) >> 7)
        default: event.data2 & 0x7F
        }
    }
}
