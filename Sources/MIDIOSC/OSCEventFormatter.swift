import MIDI
import OSC

/// Turns MIDI events into OSC messages for one destination, without allocating.
///
/// Built once per destination from a scheme and the input ports' names. Every message whose
/// address depends only on the kind, port and channel (no `{note}` or `{controller}`) and whose
/// arguments have a fixed size is laid out at build time, for every port and channel, as its
/// complete prefix: the padded address and the padded type tag string. Writing one copies that
/// prefix and stores the arguments after it. The rest (per-event placeholders, blobs,
/// `data_bytes`, ports past the names) render their address from the compiled template.
///
/// The formatter is one reference to immutable tables, so copying it costs one retain.
public struct OSCEventFormatter: Sendable {
    private let tables: OSCFormatterTables

    /// The scheme the formatter was built from.
    public var scheme: OSCScheme { tables.scheme }
    /// Where SysEx bytes are read; without it SysEx events are not sent. The formatter never
    /// releases a slot: that stays the consumer's job.
    public var sysex: SysExStore? { tables.sysex }

    /// The mapping rules tried before the scheme (see ``OSCMappingFormatter``).
    public var mappings: [OSCMappingRule] { tables.mappings?.rules ?? [] }

    /// A formatter for `scheme`; `portNames[i]` names the input port whose events have `port == i`.
    /// An event that one of `mappings` matches is sent as that rule's message instead; pass
    /// ``OSCScheme/none`` to send nothing else.
    public init(
        scheme: OSCScheme, portNames: [String], sysex: SysExStore? = nil, mappings: [OSCMappingRule] = []
    ) {
        tables = OSCFormatterTables(
            scheme: scheme, portNames: portNames, sysex: sysex,
            mappings: mappings.isEmpty ? nil : OSCMappingFormatter(rules: mappings))
    }

    /// Appends the message for `event` to `writer`; `false` when no mapping matches and the
    /// scheme does not send this kind, a SysEx event's bytes are not available, or the writer failed (buffer too small).
    ///
    /// The writer is not reset: call `reset()` between packets, or write several messages into
    /// one bundle.
    public func write(_ event: MIDIEvent, into writer: inout OSCWriter) -> Bool {
        tables.write(event, into: &writer)
    }

    /// Writes the message for `event` at the start of `buffer` and returns its size; 0 when no
    /// mapping matches and the scheme does not send this kind, a SysEx event's bytes are not available, or it does not fit.
    public func write(_ event: MIDIEvent, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        tables.write(event, into: buffer)
    }

    /// The formatter without ownership of its tables, for a hot path that keeps the formatter
    /// alive elsewhere: copying it out of memory costs no retain and release, as copying the
    /// formatter does.
    public var unretained: Unretained { Unretained(tables: .passUnretained(tables)) }

    /// A formatter that does not own its tables: valid while the ``OSCEventFormatter`` it came
    /// from lives.
    public struct Unretained: BitwiseCopyable {
        @usableFromInline let tables: Unmanaged<OSCFormatterTables>

        /// As ``OSCEventFormatter/write(_:into:)-(_,UnsafeMutableRawBufferPointer)``.
        @inlinable
        public func write(_ event: MIDIEvent, into buffer: UnsafeMutableRawBufferPointer) -> Int {
            tables._withUnsafeGuaranteedRef { $0.write(event, into: buffer) }
        }
    }

    /// The message for `event` with its address rendered from the template, never from a
    /// precompiled prefix: the reference the fast path is tested against.
    func writeRendering(_ event: MIDIEvent, into writer: inout OSCWriter) -> Bool {
        tables.writeRendering(event, into: &writer)
    }
}

/// A run of bytes in one of the tables' byte stores.
struct OSCByteRange: BitwiseCopyable {
    var offset: Int
    var count: Int
}

/// How one kind of event is written, indexed by `MIDIEventKind.rawValue`.
struct OSCKindPlan {
    var isSent = false
    var style = OSCArgumentStyle.int
    var usesDataBytes = false
    /// Into the fields table.
    var fields = OSCByteRange(offset: 0, count: 0)
    /// Into the segments table.
    var segments = OSCByteRange(offset: 0, count: 0)
    /// Whether the message is laid out in the prefix table (for ports below `portLimit`).
    var isPrefixed = false
    /// The prefix of port `p`, channel `c` is `prefixes[prefixBase + p * portStride + c * channelStride]`;
    /// a stride is 0 when the address does not depend on that value.
    var prefixBase = 0
    var portStride = 0
    var channelStride = 0
    /// Ports at or past this render their address (a name past the list is the port's index).
    var portLimit = 0
    /// The argument data after the prefix.
    var argumentBytes = 0
    /// Prefixed, with two int arguments that are the event's two data bytes (a note and its
    /// velocity, a controller and its value): the message the default and osmid schemes send
    /// for nearly every event, written by the shortest path.
    var isDataPair = false
}

/// Where an int argument's value is, for one kind of event: a byte of the event for the common
/// fields, else ``OSCEventFormatter/int`` works it out.
enum OSCIntSource: UInt8 {
    case data1, data2, channel, channel0, port, other

    init(_ field: OSCArgumentField, of kind: MIDIEventKind) {
        switch field {
        case .note, .program: self = .data1
        case .velocity: self = .data2
        case .pressure: self = kind == .polyPressure ? .data2 : .data1
        case .controller: self = kind == .controlChange ? .data1 : .other
        case .value:
            switch kind {
            case .pitchBend, .controlChange14, .rpn, .nrpn, .songPosition: self = .other
            case .noteOn, .noteOff, .polyPressure, .controlChange: self = .data2
            default: self = .data1
            }
        case .channel: self = .channel
        case .channel0: self = .channel0
        case .port: self = .port
        case .bend, .status, .data1, .data2, .dataBytes: self = .other
        }
    }
}

/// A template segment whose literal text lives in the tables' text store.
enum OSCCompiledSegment {
    case literal(OSCByteRange)
    case placeholder(OSCAddressPlaceholder)
}

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

    private let plans: UnsafeMutableBufferPointer<OSCKindPlan>
    private let fields: UnsafeMutableBufferPointer<OSCArgumentField>
    /// Beside `fields`: where each int argument's value is in the event, worked out per kind at
    /// build time, so the common ones are one load instead of a walk through ``OSCEventFormatter/int``.
    private let intSources: UnsafeMutableBufferPointer<OSCIntSource>
    private let renderer: OSCAddressRenderer
    /// Complete message prefixes (address, NUL padding, type tags, padding) into `prefixBytes`.
    private let prefixes: UnsafeMutableBufferPointer<OSCByteRange>
    private let prefixBytes: UnsafeMutableRawBufferPointer

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
            let size = (padded(capacity + 1) + padded(plan.fields.count + 2)) * (plan.channelStride == 0 ? 1 : 16)
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

        self.plans = Self.copy(plans)
        self.fields = Self.copy(fields)
        self.intSources = Self.copy(intSources)
        let textBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(text.count, 1), alignment: 16)
        textBuffer.copyBytes(from: text)
        let renderer = OSCAddressRenderer(
            segments: Self.copy(segments), text: textBuffer, portNames: Self.copy(portNameRanges),
            typeNames: Self.copy(typeNameRanges), capacity: capacity)
        self.renderer = renderer

        // Each prefix is rendered by the same code as the rendering path, then padded and given
        // its type tags, so the two cannot disagree about an address.
        var prefixRanges = [OSCByteRange](repeating: OSCByteRange(offset: 0, count: 0), count: prefixCount)
        var prefixBytes: [UInt8] = []
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
        defer { scratch.deallocate() }
        for kind in MIDIEventKind.allCases {
            let plan = plans[Int(kind.rawValue)]
            guard plan.isPrefixed else { continue }
            let ports = plan.portStride == 0 ? 1 : plan.portLimit
            for port in 0..<ports {
                for channel in 0..<(plan.channelStride == 0 ? 1 : 16) {
                    let event = MIDIEvent(kind, channel: UInt8(channel), port: UInt16(port))
                    let length = renderer.render(plan.segments, event, into: scratch.baseAddress!)
                    let start = prefixBytes.count
                    prefixBytes += scratch[..<length]
                    prefixBytes += repeatElement(0, count: padded(length + 1) - length)
                    let tags = Self.typeTags(plan.style, plan.fields.count)
                    prefixBytes += tags
                    prefixBytes += repeatElement(0, count: padded(tags.count + 1) - tags.count)
                    prefixRanges[plan.prefixBase + port * plan.portStride + channel * plan.channelStride] =
                        OSCByteRange(offset: start, count: prefixBytes.count - start)
                }
            }
        }
        self.prefixes = Self.copy(prefixRanges)
        let prefixBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(prefixBytes.count, 1), alignment: 16)
        prefixBuffer.copyBytes(from: prefixBytes)
        self.prefixBytes = prefixBuffer
    }

    deinit {
        plans.deallocate()
        fields.deallocate()
        intSources.deallocate()
        renderer.deallocate()
        prefixes.deallocate()
        prefixBytes.deallocate()
    }

    /// The array's elements in a buffer of exactly its count (an empty array still allocates, so
    /// that every table has a base address).
    private static func copy<T>(_ array: [T]) -> UnsafeMutableBufferPointer<T> {
        let buffer = UnsafeMutableBufferPointer<T>.allocate(capacity: max(array.count, 1))
        _ = buffer.initialize(from: array)
        return UnsafeMutableBufferPointer(rebasing: buffer[..<array.count])
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

    // The hot path reads the plan through a pointer, field by field: copying the whole plan out
    // of the table costs more than the rest of a message.

    func write(_ event: MIDIEvent, into writer: inout OSCWriter) -> Bool {
        if let mappings, let match = mappings.match(event) {
            guard let start = writer.claimMessage(byteCount: match.size) else { return false }
            mappings.write(match, at: start)
            return true
        }
        let index = Int(event.kind.rawValue)
        guard index < plans.count else { return false }
        let plan = plans.baseAddress! + index
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
            let plan = plans.baseAddress.unsafelyUnwrapped + index
            if plan.pointee.isDataPair, let prefix = prefix(plan, event) {
                let size = prefix.count &+ 8
                guard size <= buffer.count, let start = buffer.baseAddress else { return 0 }
                start.copyMemory(
                    from: prefixBytes.baseAddress.unsafelyUnwrapped + prefix.offset, byteCount: prefix.count)
                let arguments = start + prefix.count
                arguments.storeBytes(of: UInt32(event.data1 & 0x7F).bigEndian, as: UInt32.self)
                arguments.storeBytes(of: UInt32(event.data2 & 0x7F).bigEndian, toByteOffset: 4, as: UInt32.self)
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
        let plan = plans.baseAddress! + index
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
        start.copyMemory(from: prefixBytes.baseAddress.unsafelyUnwrapped + prefix.offset, byteCount: prefix.count)
        let arguments = start + prefix.count
        let style = plan.pointee.style
        let fields = self.fields.baseAddress.unsafelyUnwrapped + plan.pointee.fields.offset
        let fieldCount = plan.pointee.fields.count
        switch style {
        case .int:
            let sources = intSources.baseAddress.unsafelyUnwrapped + plan.pointee.fields.offset
            var i = 0
            while i < fieldCount {
                let value: Int32
                switch sources[i] {
                case .data1: value = Int32(event.data1 & 0x7F)
                case .data2: value = Int32(event.data2 & 0x7F)
                case .channel: value = Int32(event.channel & 0x0F) &+ 1
                case .channel0: value = Int32(event.channel & 0x0F)
                case .port: value = Int32(event.port)
                case .other: value = OSCEventFormatter.int(fields[i], event)
                }
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
            let (status, data1, data2) = OSCEventFormatter.midiBytes(event)
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
            let (status, data1, data2) = OSCEventFormatter.midiBytes(event)
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
        let fields = UnsafeBufferPointer(start: self.fields.baseAddress! + plan.fields.offset, count: plan.fields.count)
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

/// Renders addresses from compiled templates: literals, port names and kind names are runs of
/// one byte store, so rendering copies bytes and writes digits.
struct OSCAddressRenderer {
    let segments: UnsafeMutableBufferPointer<OSCCompiledSegment>
    /// Sanitised port names, kind names and template literals.
    let text: UnsafeMutableRawBufferPointer
    let portNames: UnsafeMutableBufferPointer<OSCByteRange>
    let typeNames: UnsafeMutableBufferPointer<OSCByteRange>
    /// The longest address any event can render to.
    let capacity: Int

    func deallocate() {
        segments.deallocate()
        text.deallocate()
        portNames.deallocate()
        typeNames.deallocate()
    }

    /// Writes the address for `event` at `start`, which has room for `capacity` bytes.
    func render(_ range: OSCByteRange, _ event: MIDIEvent, into start: UnsafeMutableRawPointer) -> Int {
        var count = 0
        var i = range.offset
        while i < range.offset + range.count {
            switch segments[i] {
            case .literal(let literal): copy(literal, to: start, at: &count)
            case .placeholder(let placeholder):
                switch placeholder {
                case .port:
                    let port = Int(event.port)
                    if port < portNames.count {
                        copy(portNames[port], to: start, at: &count)
                    } else {
                        Self.writeDecimal(port, to: start, at: &count)
                    }
                case .id: Self.writeDecimal(Int(event.port), to: start, at: &count)
                case .channel: Self.writeDecimal(Int(event.channel & 0x0F) + 1, to: start, at: &count)
                case .channel0: Self.writeDecimal(Int(event.channel & 0x0F), to: start, at: &count)
                case .type: copy(typeNames[Int(event.kind.rawValue)], to: start, at: &count)
                case .note: Self.writeDecimal(Int(event.data1 & 0x7F), to: start, at: &count)
                case .controller:
                    let controller = event.kind == .controlChange ? Int(event.data1 & 0x7F) : Int(event.parameter)
                    Self.writeDecimal(controller, to: start, at: &count)
                }
            }
            i += 1
        }
        return count
    }

    @inline(__always)
    private func copy(_ range: OSCByteRange, to start: UnsafeMutableRawPointer, at count: inout Int) {
        (start + count).copyMemory(from: text.baseAddress! + range.offset, byteCount: range.count)
        count += range.count
    }

    /// Writes `value` (0...99999) in decimal without building a string.
    @inline(__always)
    private static func writeDecimal(_ value: Int, to start: UnsafeMutableRawPointer, at count: inout Int) {
        var divisor = 1
        while divisor * 10 <= value { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            start.storeBytes(
                of: UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest / divisor), toByteOffset: count, as: UInt8.self)
            rest %= divisor
            divisor /= 10
            count += 1
        }
    }

}

/// Rounds up to the 4-byte alignment OSC requires of every field.
private func padded(_ size: Int) -> Int { (size + 3) & ~3 }

// MARK: Values

extension OSCEventFormatter {
    fileprivate static func int(_ field: OSCArgumentField, _ event: MIDIEvent) -> Int32 {
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

    fileprivate static func float(_ field: OSCArgumentField, _ event: MIDIEvent) -> Float {
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

    /// Status, data 1 and data 2 of a one-message kind, the missing data bytes 0.
    fileprivate static func midiBytes(_ event: MIDIEvent) -> (UInt8, UInt8, UInt8) {
        let byteCount = OSCArgumentField.dataByteCount(event.kind)
        return (status(event), byteCount >= 1 ? data1(event) : 0, byteCount >= 2 ? data2(event) : 0)
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
