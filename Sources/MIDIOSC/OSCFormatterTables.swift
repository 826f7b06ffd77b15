import MIDI
import OSC
import Storage

/// The formatter's compiled state, allocated once and never changed: a final class so that the
/// formatter copies as one reference and the hot path reaches everything through raw pointers,
/// with no Array or enum payload to retain, copy or bounds-check per event.
@usableFromInline
final class OSCFormatterTables: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; the buffers are owned here and freed in deinit.

    let scheme: OSCScheme
    let sysex: SysExStore?
    /// Tried before the scheme; nil when the destination has no mapping rules.
    let mappings: OSCMappingFormatter?

    /// Above this many bytes of prefixes, later ports render their addresses instead.
    static let prefixBudget = 256 * 1024

    private let plans: FixedBuffer<OSCKindPlan>
    private let fields: FixedBuffer<OSCArgumentField>
    /// Beside `fields`: where each int argument's value is in the event, worked out per kind at
    /// build time, so the common ones are one load instead of a walk through ``OSCEventFormatter/int``.
    private let intSources: FixedBuffer<OSCIntSource>
    private let renderer: OSCAddressRenderer
    /// Complete message prefixes (address, NUL padding, type tags, padding) into `prefixBytes`.
    private let prefixes: FixedBuffer<OSCByteRange>
    private let prefixBytes: FixedBytes

    init(scheme: OSCScheme, portNames names: [String], sysex: SysExStore?, mappings: OSCMappingFormatter? = nil) {
        self.scheme = scheme
        self.sysex = sysex
        self.mappings = mappings
        let kindCount = MIDIEventKind.allCases.count
        var text: [UInt8] = []
        func store(_ bytes: [UInt8]) -> OSCByteRange {
            defer { text += bytes }
            return OSCByteRange(offset: text.count, count: bytes.count)
        }
        let portNameRanges = names.map { store(scheme.portNameStyle.sanitisedBytes($0)) }
        let typeNameRanges = MIDIEventKind.allCases.map { store(Array($0.description.utf8)) }
        let longestPort = max(portNameRanges.map(\.count).max() ?? 0, 5)
        let longestType = typeNameRanges.map(\.count).max() ?? 0

        var plans = [OSCKindPlan](repeating: OSCKindPlan(), count: kindCount)
        var fields: [OSCArgumentField] = []
        var intSources: [OSCIntSource] = []
        var segments: [OSCCompiledSegment] = []
        var capacity = 1
        var prefixCount = 0
        for kind in MIDIEventKind.allCases {
            guard let entry = scheme[kind] else { continue }
            var plan = OSCKindPlan()
            plan.isSent = Self.canSend(kind, entry.style)
            plan.style = entry.style
            plan.usesDataBytes = entry.arguments.contains(.dataBytes)
            plan.fields = OSCByteRange(offset: fields.count, count: entry.arguments.count)
            fields += entry.arguments
            intSources += entry.arguments.map { OSCIntSource($0, of: kind) }
            plan.segments = OSCByteRange(offset: segments.count, count: entry.address.segments.count)
            var length = 0
            var perEvent = false
            var byPort = false
            var byChannel = false
            for segment in entry.address.segments {
                switch segment {
                case .literal(let bytes):
                    segments.append(.literal(store(bytes)))
                    length += bytes.count
                case .placeholder(let placeholder):
                    segments.append(.placeholder(placeholder))
                    switch placeholder {
                    case .port: length += longestPort
                    case .type: length += longestType
                    default: length += 5  // the widest number, 65535
                    }
                    switch placeholder {
                    case .port, .id: byPort = true
                    case .channel, .channel0: byChannel = true
                    case .note, .controller: perEvent = true
                    case .type: break
                    }
                }
            }
            capacity = max(capacity, length)
            plan.argumentBytes = Self.argumentBytes(entry.style, entry.arguments.count)
            plan.isPrefixed = plan.isSent && !perEvent && !plan.usesDataBytes && entry.style != .blob
            plan.isDataPair =
                plan.isPrefixed && entry.style == .int
                && entry.arguments.map { OSCIntSource($0, of: kind) } == [.data1, .data2]
            if plan.isPrefixed {
                plan.channelStride = byChannel ? 1 : 0
                plan.portStride = byPort ? (byChannel ? 16 : 1) : 0
                plan.portLimit = byPort ? names.count : Int(UInt16.max) + 1
            }
            plans[Int(kind.rawValue)] = plan
        }

        // Ports get prefixes in order while they fit the budget; a port's prefixes are at most
        // the longest address and the kind's tag area, 16 times over for the channel kinds.
        var bytesPerPort = 0
        var bytesOnce = 0
        for plan in plans where plan.isPrefixed {
            let size =
                (OSCWriter.padded(capacity + 1) + OSCWriter.padded(plan.fields.count + 2))
                * (plan.channelStride == 0 ? 1 : 16)
            if plan.portStride == 0 { bytesOnce += size } else { bytesPerPort += size }
        }
        let portsInBudget =
            bytesPerPort == 0 ? names.count : max(0, (Self.prefixBudget - bytesOnce) / bytesPerPort)
        let prefixedPorts = min(names.count, portsInBudget)
        for index in plans.indices where plans[index].isPrefixed {
            if plans[index].portStride != 0 { plans[index].portLimit = prefixedPorts }
            plans[index].prefixBase = prefixCount
            let ports = plans[index].portStride == 0 ? 1 : prefixedPorts
            prefixCount += ports * (plans[index].channelStride == 0 ? 1 : 16)
        }

        self.plans = .frozen(plans)
        self.fields = .frozen(fields)
        self.intSources = .frozen(intSources)
        self.renderer = OSCAddressRenderer(
            segments: .frozen(segments), text: .frozen(text), portNames: .frozen(portNameRanges),
            typeNames: .frozen(typeNameRanges), capacity: capacity)

        // Each prefix is rendered by the same code as the rendering path, then padded and given
        // its type tags, so the two cannot disagree about an address.
        var prefixRanges = [OSCByteRange](repeating: OSCByteRange(offset: 0, count: 0), count: prefixCount)
        var prefixBytes: [UInt8] = []
        let scratch = FixedBytes(count: capacity)
        for kind in MIDIEventKind.allCases {
            let plan = plans[Int(kind.rawValue)]
            guard plan.isPrefixed else { continue }
            let ports = plan.portStride == 0 ? 1 : plan.portLimit
            for port in 0..<ports {
                for channel in 0..<(plan.channelStride == 0 ? 1 : 16) {
                    let event = MIDIEvent(kind, channel: UInt8(channel), port: UInt16(port))
                    let length = self.renderer.render(plan.segments, event, into: scratch.baseAddress)
                    let start = prefixBytes.count
                    prefixBytes += scratch.bytes[..<length]
                    prefixBytes += repeatElement(0, count: OSCWriter.padded(length + 1) - length)
                    let tags = Self.typeTags(plan.style, plan.fields.count)
                    prefixBytes += tags
                    prefixBytes += repeatElement(0, count: OSCWriter.padded(tags.count + 1) - tags.count)
                    prefixRanges[plan.prefixBase + port * plan.portStride + channel * plan.channelStride] =
                        OSCByteRange(offset: start, count: prefixBytes.count - start)
                }
            }
        }
        self.prefixes = .frozen(prefixRanges)
        self.prefixBytes = .frozen(prefixBytes)
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

    /// The argument data of a prefixed message; unused for the styles that are never prefixed.
    private static func argumentBytes(_ style: OSCArgumentStyle, _ fieldCount: Int) -> Int {
        switch style {
        case .int, .float: 4 * fieldCount
        case .midi, .touchOSCMIDI: 4
        case .blob: 0
        }
    }

    /// The type tag string, `,` included, of a prefixed message.
    private static func typeTags(_ style: OSCArgumentStyle, _ fieldCount: Int) -> [UInt8] {
        switch style {
        case .int: [UInt8(ascii: ",")] + repeatElement(OSCTypeTag.int32, count: fieldCount)
        case .float: [UInt8(ascii: ",")] + repeatElement(OSCTypeTag.float32, count: fieldCount)
        case .midi, .touchOSCMIDI: [UInt8(ascii: ","), OSCTypeTag.midi]
        case .blob: [UInt8(ascii: ","), OSCTypeTag.blob]
        }
    }

    // MARK: Writing

    // The hot path reads the plan through a pointer, field by field, so that no message pays
    // for copying the whole plan out of the table.

    func write(_ event: MIDIEvent, into writer: inout OSCWriter) -> Bool {
        if let mappings, let match = mappings.match(event) {
            guard let start = writer.claimMessage(byteCount: match.size) else { return false }
            mappings.write(match, at: start)
            return true
        }
        let index = Int(event.kind.rawValue)
        guard index < plans.count else { return false }
        let plan = plans.baseAddress + index
        guard plan.pointee.isSent else { return false }
        guard let prefix = prefix(plan, event) else { return writeRendering(plan.pointee, event, into: &writer) }
        let size = prefix.count &+ plan.pointee.argumentBytes
        guard let start = writer.claimMessage(byteCount: size) else { return false }
        writePrefixed(plan, prefix, event, at: start)
        return true
    }

    @usableFromInline
    func write(_ event: MIDIEvent, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let index = Int(event.kind.rawValue)
        if mappings == nil && index < plans.count {
            let plan = plans.baseAddress + index
            if plan.pointee.isDataPair, let prefix = prefix(plan, event) {
                let size = prefix.count &+ 8
                guard size <= buffer.count, let start = buffer.baseAddress else { return 0 }
                start.copyMemory(
                    from: prefixBytes.baseAddress + prefix.offset, byteCount: prefix.count)
                let arguments = start + prefix.count
                let first = OSCIntSource.data1.value(in: event)
                let second = OSCIntSource.data2.value(in: event)
                arguments.storeBytes(of: UInt32(bitPattern: first).bigEndian, as: UInt32.self)
                arguments.storeBytes(of: UInt32(bitPattern: second).bigEndian, toByteOffset: 4, as: UInt32.self)
                return size
            }
        }
        return writeAny(event, into: buffer)
    }

    /// ``write(_:into:)`` for every message but a data pair's.
    @inline(never)
    private func writeAny(_ event: MIDIEvent, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if let mappings, let size = mappings.write(event, into: buffer) { return size }
        let index = Int(event.kind.rawValue)
        guard index < plans.count else { return 0 }
        let plan = plans.baseAddress + index
        guard plan.pointee.isSent else { return 0 }
        guard let prefix = prefix(plan, event) else {
            var writer = OSCWriter(buffer)
            return writeRendering(plan.pointee, event, into: &writer) ? writer.count : 0
        }
        let size = prefix.count &+ plan.pointee.argumentBytes
        guard size <= buffer.count, let start = buffer.baseAddress else { return 0 }
        writePrefixed(plan, prefix, event, at: start)
        return size
    }

    func writeRendering(_ event: MIDIEvent, into writer: inout OSCWriter) -> Bool {
        let index = Int(event.kind.rawValue)
        guard index < plans.count else { return false }
        let plan = plans[index]
        guard plan.isSent else { return false }
        return writeRendering(plan, event, into: &writer)
    }

    /// The precompiled prefix for the event's port and channel, if there is one.
    @inline(__always)
    private func prefix(_ plan: UnsafePointer<OSCKindPlan>, _ event: MIDIEvent) -> OSCByteRange? {
        let port = Int(event.port)
        guard plan.pointee.isPrefixed, port < plan.pointee.portLimit else { return nil }
        // Cannot overflow: the indices were laid out at init for every port below the limit.
        let channel = Int(event.channel & 0x0F)
        return prefixes[
            plan.pointee.prefixBase &+ port &* plan.pointee.portStride &+ channel &* plan.pointee.channelStride]
    }

    /// Copies the prefix and stores the arguments; the caller has checked the room.
    @inline(__always)
    private func writePrefixed(
        _ plan: UnsafePointer<OSCKindPlan>, _ prefix: OSCByteRange, _ event: MIDIEvent,
        at start: UnsafeMutableRawPointer
    ) {
        start.copyMemory(from: prefixBytes.baseAddress + prefix.offset, byteCount: prefix.count)
        let arguments = start + prefix.count
        let style = plan.pointee.style
        let fields = self.fields.baseAddress + plan.pointee.fields.offset
        let fieldCount = plan.pointee.fields.count
        switch style {
        case .int:
            let sources = intSources.baseAddress + plan.pointee.fields.offset
            var i = 0
            while i < fieldCount {
                let source = sources[i]
                let value = source == .other ? OSCEventFormatter.int(fields[i], event) : source.value(in: event)
                arguments.storeBytes(of: UInt32(bitPattern: value).bigEndian, toByteOffset: i &* 4, as: UInt32.self)
                i &+= 1
            }
        case .float:
            var i = 0
            while i < fieldCount {
                let value = OSCEventFormatter.float(fields[i], event)
                arguments.storeBytes(of: value.bitPattern.bigEndian, toByteOffset: i &* 4, as: UInt32.self)
                i &+= 1
            }
        case .midi, .touchOSCMIDI:
            let (status, data1, data2) = event.wireBytes
            let first = style == .midi ? status : data2
            let last = style == .midi ? data2 : status
            arguments.storeBytes(of: UInt8(truncatingIfNeeded: event.port), toByteOffset: 0, as: UInt8.self)
            arguments.storeBytes(of: first, toByteOffset: 1, as: UInt8.self)
            arguments.storeBytes(of: data1, toByteOffset: 2, as: UInt8.self)
            arguments.storeBytes(of: last, toByteOffset: 3, as: UInt8.self)
        case .blob:
            break  // never prefixed
        }
    }

    // MARK: Rendering

    private func writeRendering(_ plan: OSCKindPlan, _ event: MIDIEvent, into writer: inout OSCWriter) -> Bool {
        withUnsafeTemporaryAllocation(byteCount: renderer.capacity, alignment: 1) { buffer in
            let length = renderer.render(plan.segments, event, into: buffer.baseAddress!)
            let address = UnsafeRawBufferPointer(start: buffer.baseAddress, count: length)
            return writeMessage(plan, event, address: address, into: &writer)
        }
    }

    private func writeMessage(
        _ plan: OSCKindPlan, _ event: MIDIEvent, address: UnsafeRawBufferPointer, into writer: inout OSCWriter
    ) -> Bool {
        switch plan.style {
        case .int, .float:
            guard plan.usesDataBytes else {
                writeFields(plan, event, dataBytes: UnsafeRawBufferPointer(start: nil, count: 0), address, &writer)
                return writer.failure == nil
            }
            return withWireBytes(event) { message in
                // The data bytes: after the status byte, and for SysEx before the closing F7.
                var end = message.count
                if event.kind == .sysex, end > 1, message[end - 1] == 0xF7 { end -= 1 }
                let data = UnsafeRawBufferPointer(rebasing: message[min(1, end)..<end])
                writeFields(plan, event, dataBytes: data, address, &writer)
                return writer.failure == nil
            }
        case .midi, .touchOSCMIDI:
            let (status, data1, data2) = event.wireBytes
            let port = UInt8(truncatingIfNeeded: event.port)
            writer.beginMessage(address: address, argumentCount: 1)
            if plan.style == .midi {
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
        _ plan: OSCKindPlan, _ event: MIDIEvent, dataBytes: UnsafeRawBufferPointer,
        _ address: UnsafeRawBufferPointer, _ writer: inout OSCWriter
    ) {
        let fields = UnsafeBufferPointer(start: self.fields.baseAddress + plan.fields.offset, count: plan.fields.count)
        var argumentCount = 0
        var i = 0
        while i < fields.count {
            argumentCount += fields[i] == .dataBytes ? dataBytes.count : 1
            i += 1
        }
        writer.beginMessage(address: address, argumentCount: argumentCount)
        let isFloat = plan.style == .float
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
                writer.append(float32: OSCEventFormatter.float(field, event))
            } else {
                writer.append(int32: OSCEventFormatter.int(field, event))
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
