import MIDI
import OSC
import OSCMapping
import Storage

/// Turns MIDI events into OSC messages for one destination, without allocating.
///
/// Built once per destination from a scheme, its mapping rules and the input ports' names:
/// every address the scheme sends is rendered (``SentAddresses``) and each kind's argument
/// fields laid out in one table. Writing an event tries the mapping rules, then copies the
/// kind's address for the event's port and channel on the stack and lays the message out in
/// one piece (``OSCWriter/appendMessage(_:)``): address, type tags, arguments, the size checked
/// once, as the addresses were at load.
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
    /// scheme does not send this kind, the kind's address names a port the formatter has no name
    /// for, a SysEx event's bytes are not available, or the writer failed (buffer too small).
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
        guard format.usesDataBytes || format.style == .blob else {
            writer.appendMessage {
                layOut(format, event, address, bytes: UnsafeRawBufferPointer(start: nil, count: 0), $0)
            }
            return writer.failure == nil
        }
        return withWireBytes(event) { message in
            var bytes = message
            if format.style != .blob {
                // The data bytes: after the status byte, and for SysEx before the closing F7.
                var end = message.count
                if event.kind == .sysex, end > 1, message[end - 1] == 0xF7 { end -= 1 }
                bytes = UnsafeRawBufferPointer(rebasing: message[min(1, end)..<end])
            }
            writer.appendMessage { layOut(format, event, address, bytes: bytes, $0) }
            return writer.failure == nil
        }
    }

    /// Lays out the message for `event` at the start of `out`: the address and its padding, the
    /// type tags, the arguments (`bytes`: the data bytes, or a blob's MIDI message). Returns its
    /// size, or 0 when it does not fit.
    private func layOut(
        _ format: MessageFormat, _ event: MIDIEvent, _ address: UnsafeRawBufferPointer, bytes: UnsafeRawBufferPointer,
        _ out: UnsafeMutableRawBufferPointer
    ) -> Int {
        var argumentCount = 1
        var argumentsSize = 4
        switch format.style {
        case .int, .float:
            argumentCount = 0
            var i = format.fields.offset
            while i < format.fields.offset &+ format.fields.count {
                argumentCount &+= fields[i] == .dataBytes ? bytes.count : 1
                i &+= 1
            }
            argumentsSize = 4 &* argumentCount
        case .midi, .touchOSCMIDI: break
        case .blob: argumentsSize = 4 &+ OSCWriter.padded(bytes.count)
        }
        let addressSize = OSCWriter.padded(address.count &+ 1)
        let tagsSize = OSCWriter.padded(argumentCount &+ 2)
        let size = addressSize &+ tagsSize &+ argumentsSize
        guard size <= out.count, let base = out.baseAddress, let source = address.baseAddress else { return 0 }
        base.copyMemory(from: source, byteCount: address.count)
        (base + address.count).initializeMemory(
            as: UInt8.self, repeating: 0, count: addressSize &+ tagsSize &- address.count)
        base.storeBytes(of: UInt8(ascii: ","), toByteOffset: addressSize, as: UInt8.self)
        var message = LaidOutMessage(base: base, tag: addressSize &+ 1, argument: addressSize &+ tagsSize)
        switch format.style {
        case .int, .float:
            let isFloat = format.style == .float
            var i = format.fields.offset
            while i < format.fields.offset &+ format.fields.count {
                let field = fields[i]
                if field == .dataBytes {
                    var j = 0
                    while j < bytes.count {
                        let byte = bytes[j] & 0x7F
                        if isFloat { message.append(Float(byte) / 127) } else { message.append(Int32(byte)) }
                        j &+= 1
                    }
                } else if isFloat {
                    message.append(Self.float(field, event))
                } else {
                    message.append(Self.int(field, event))
                }
                i &+= 1
            }
        case .midi, .touchOSCMIDI:
            let (status, data1, data2) = event.wireBytes
            let port = UInt8(truncatingIfNeeded: event.port)
            // TouchOSC's order: the status byte last.
            if format.style == .midi {
                message.append(midi: (port, status, data1, data2))
            } else {
                message.append(midi: (port, data2, data1, status))
            }
        case .blob:
            message.append(blob: bytes)
        }
        return size
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

/// The type tags and arguments of a message ``OSCEventFormatter`` lays out, written where its
/// size, checked first, left room: each argument's tag at `tag`, its bytes at `argument`.
private struct LaidOutMessage {
    let base: UnsafeMutableRawPointer
    var tag: Int
    var argument: Int

    mutating func append(_ value: Int32) {
        store(OSCTypeTag.int32, UInt32(bitPattern: value))
    }

    mutating func append(_ value: Float) {
        store(OSCTypeTag.float32, value.bitPattern)
    }

    mutating func append(midi bytes: (UInt8, UInt8, UInt8, UInt8)) {
        base.storeBytes(of: OSCTypeTag.midi, toByteOffset: tag, as: UInt8.self)
        tag &+= 1
        base.storeBytes(of: bytes, toByteOffset: argument, as: (UInt8, UInt8, UInt8, UInt8).self)
        argument &+= 4
    }

    mutating func append(blob bytes: UnsafeRawBufferPointer) {
        store(OSCTypeTag.blob, UInt32(bytes.count))
        if let source = bytes.baseAddress { (base + argument).copyMemory(from: source, byteCount: bytes.count) }
        let padded = OSCWriter.padded(bytes.count)
        (base + (argument &+ bytes.count)).initializeMemory(as: UInt8.self, repeating: 0, count: padded &- bytes.count)
        argument &+= padded
    }

    private mutating func store(_ tag: UInt8, _ value: UInt32) {
        base.storeBytes(of: tag, toByteOffset: self.tag, as: UInt8.self)
        self.tag &+= 1
        base.storeBytes(of: value.bigEndian, toByteOffset: argument, as: UInt32.self)
        argument &+= 4
    }
}
