import MIDI
import OSC
import OSCMapping
import Storage

/// Turns MIDI events into OSC messages for one destination, without allocating.
///
/// Built once per destination from a scheme, its mapping rules and the input ports' names:
/// every address the scheme sends is rendered (``SentAddresses``) and each kind's argument
/// fields laid out in one table. Writing an event tries the mapping rules, then copies the
/// kind's address for the event's port and channel on the stack and writes the message through
/// ``OSCWriter``: address, type tags, arguments.
package final class OSCEventFormatter: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; the fixed buffers are owned here.

    /// The scheme the formatter was built from.
    let scheme: OSCScheme
    /// Where SysEx bytes are read; without it SysEx events are not sent. The formatter never
    /// releases a slot: that stays the consumer's job.
    let sysex: SysExStore?
    /// Tried before the scheme; nil when the destination has no mapping rules.
    private let mappingFormatter: OSCMappingFormatter?
    /// What each kind sends, by `MIDIEventKind.rawValue`.
    private let formats: FixedBuffer<MessageFormat>
    /// The argument fields of every kind, each kind's a run of them.
    private let fields: FixedBuffer<OSCArgumentField>
    private let addresses: SentAddresses

    /// The mapping rules tried before the scheme (see ``OSCMappingFormatter``).
    package var mappings: [OSCMappingRule] { mappingFormatter?.rules ?? [] }

    /// How one kind of event is written.
    private struct MessageFormat {
        var isSent = false
        var style = OSCArgumentStyle.int
        var usesDataBytes = false
        /// Into ``OSCEventFormatter/fields``.
        var fields = OSCByteRange(offset: 0, count: 0)
    }

    /// A formatter for `scheme`; `portNames[i]` names the input port whose events have `port == i`.
    /// An event that one of `mappings` matches is sent as that rule's message instead; pass
    /// ``OSCScheme/none`` to send nothing else.
    package init(
        scheme: OSCScheme, portNames names: [String], sysex: SysExStore? = nil, mappings: [OSCMappingRule] = []
    ) {
        self.scheme = scheme
        self.sysex = sysex
        mappingFormatter = mappings.isEmpty ? nil : OSCMappingFormatter(rules: mappings)
        var formats = [MessageFormat](repeating: MessageFormat(), count: MIDIEventKind.allCases.count)
        var templates = [OSCAddressTemplate?](repeating: nil, count: MIDIEventKind.allCases.count)
        var fields: [OSCArgumentField] = []
        for kind in MIDIEventKind.allCases {
            guard let entry = scheme[kind] else { continue }
            var format = MessageFormat()
            format.isSent = Self.canSend(kind, entry.style)
            format.style = entry.style
            format.usesDataBytes = entry.arguments.contains(.dataBytes)
            format.fields = OSCByteRange(offset: fields.count, count: entry.arguments.count)
            fields += entry.arguments
            formats[Int(kind.rawValue)] = format
            if format.isSent { templates[Int(kind.rawValue)] = entry.address }
        }
        self.formats = .frozen(formats)
        self.fields = .frozen(fields)
        addresses = SentAddresses(
            templates: templates, portNames: names.map { scheme.portNameStyle.sanitisedBytes($0) })
    }

    /// The `m` styles carry one MIDI message, which the assembled kinds and SysEx are not.
    private static func canSend(_ kind: MIDIEventKind, _ style: OSCArgumentStyle) -> Bool {
        switch (style, kind) {
        case (.midi, .sysex), (.midi, .controlChange14), (.midi, .rpn), (.midi, .nrpn): false
        case (.touchOSCMIDI, .sysex), (.touchOSCMIDI, .controlChange14), (.touchOSCMIDI, .rpn),
            (.touchOSCMIDI, .nrpn):
            false
        default: true
        }
    }

    // MARK: Writing

    /// Appends the message for `event` to `writer`; `false` when no mapping matches and the
    /// scheme does not send this kind, the event's port is not one the formatter was built with,
    /// a SysEx event's bytes are not available, or the writer failed (buffer too small).
    ///
    /// The writer is not reset: call `reset()` between packets, or write several messages into
    /// one bundle.
    package func write(_ event: MIDIEvent, into writer: inout OSCWriter) -> Bool {
        if let mappingFormatter, let match = mappingFormatter.match(event) {
            return mappingFormatter.write(match, into: &writer)
        }
        let index = Int(event.kind.rawValue)
        guard index < formats.count, formats[index].isSent else { return false }
        let format = formats[index]
        return withUnsafeTemporaryAllocation(byteCount: addresses.capacity, alignment: 1) { buffer in
            guard let length = addresses.render(event, into: buffer.baseAddress!) else { return false }
            let address = UnsafeRawBufferPointer(start: buffer.baseAddress, count: length)
            return writeMessage(format, event, address: address, into: &writer)
        }
    }

    /// Writes the message for `event` at the start of `buffer` and returns its size; 0 when no
    /// mapping matches and the scheme does not send this kind, a SysEx event's bytes are not
    /// available, or it does not fit.
    package func write(_ event: MIDIEvent, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var writer = OSCWriter(buffer)
        return write(event, into: &writer) ? writer.count : 0
    }

    private func writeMessage(
        _ format: MessageFormat, _ event: MIDIEvent, address: UnsafeRawBufferPointer, into writer: inout OSCWriter
    ) -> Bool {
        switch format.style {
        case .int, .float:
            guard format.usesDataBytes else {
                writeFields(format, event, dataBytes: UnsafeRawBufferPointer(start: nil, count: 0), address, &writer)
                return writer.failure == nil
            }
            return withWireBytes(event) { message in
                // The data bytes: after the status byte, and for SysEx before the closing F7.
                var end = message.count
                if event.kind == .sysex, end > 1, message[end - 1] == 0xF7 { end -= 1 }
                let data = UnsafeRawBufferPointer(rebasing: message[min(1, end)..<end])
                writeFields(format, event, dataBytes: data, address, &writer)
                return writer.failure == nil
            }
        case .midi, .touchOSCMIDI:
            let (status, data1, data2) = event.wireBytes
            let port = UInt8(truncatingIfNeeded: event.port)
            writer.beginMessage(address: address, argumentCount: 1)
            if format.style == .midi {
                writer.append(midiPort: port, status: status, data1: data1, data2: data2)
            } else {
                // TouchOSC's order: the status byte last.
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
        _ format: MessageFormat, _ event: MIDIEvent, dataBytes: UnsafeRawBufferPointer,
        _ address: UnsafeRawBufferPointer, _ writer: inout OSCWriter
    ) {
        let start = format.fields.offset
        let end = start + format.fields.count
        var argumentCount = 0
        var i = start
        while i < end {
            argumentCount += fields[i] == .dataBytes ? dataBytes.count : 1
            i += 1
        }
        writer.beginMessage(address: address, argumentCount: argumentCount)
        let isFloat = format.style == .float
        i = start
        while i < end {
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
}
