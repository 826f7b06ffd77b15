import MIDI
import OSC
import OSCMapping
import Storage

/// Sends MIDI events as the OSC messages of mapping rules: the way back of
/// ``OSCToMIDITranslator``'s rules, as OSC2MIDI's maps work both ways.
///
/// An event matches a rule of its kind (a note-off that matches no note-off rule is also tried
/// as a note-on with velocity 0) when every field the rule sets from a constant has that value
/// and the channel is the rule's (1 when not given). Each field read from an argument or a
/// capture fills it in, scaled back (``OSCLinearScale/invert(_:)``, clamped): `i`, `h` and
/// captures are rounded, halves away from zero. A scaled capture names which control, so a value
/// outside its `out` range matches nothing rather than being clamped onto the last control. When
/// a value fills the same argument or capture twice, the two must agree. The first matching rule
/// wins.
///
/// Built once; matching and writing allocate nothing. Writing renders the rule's address (its
/// literal runs and captures in decimal) on the stack and writes the message through
/// ``OSCWriter`` with the rule's type tags.
package struct OSCMappingFormatter: Sendable {
    /// The most arguments a sent message may have.
    static let maximumArguments = OSCMappingRule.maximumSentArguments

    private let tables: OSCMappingTables

    /// The rules, in the order they are tried; rules that fail ``OSCMappingRule/checkSendable()``
    /// are left out (the config reader reports them).
    var rules: [OSCMappingRule] { tables.rules }

    package init(rules: [OSCMappingRule]) {
        tables = OSCMappingTables(rules: rules.filter { (try? $0.checkSendable()) != nil })
    }

    /// The first rule that matches `event`, with the values it sends; nil when none matches.
    func match(_ event: MIDIEvent) -> OSCMappingMatch? {
        tables.match(event)
    }

    /// Appends the message of `match` to `writer`; `false` when the writer failed (buffer too
    /// small).
    func write(_ match: OSCMappingMatch, into writer: inout OSCWriter) -> Bool {
        tables.write(match, into: &writer)
    }

    /// Writes the message for `event` at the start of `buffer`: its size, 0 when it does not
    /// fit, nil when no rule matches.
    package func write(_ event: MIDIEvent, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard let match = tables.match(event) else { return nil }
        var writer = OSCWriter(buffer)
        return tables.write(match, into: &writer) ? writer.count : 0
    }
}

/// A rule that matched an event, and the values it sends: kept on the stack between matching
/// and writing.
struct OSCMappingMatch {
    /// The index of the rule in ``OSCMappingFormatter/rules``.
    let rule: Int
    fileprivate var arguments = TupleArray16<Double>(repeating: 0)
    fileprivate var captures = TupleArray8<Int64>(repeating: 0)

    fileprivate init(rule: Int) {
        self.rule = rule
    }
}

/// How one field of an event is compared with or fills in a rule's message.
struct OSCReverseField {
    enum Role: UInt8 {
        /// Not compared (a note-off's velocity the rule does not set).
        case ignored
        /// Must equal ``expected``.
        case equals
        /// Fills in argument ``index``.
        case argument
        /// Fills in capture ``index``.
        case capture
    }

    var target: OSCMappingTarget
    var role: Role
    var index = 0
    var expected = 0
    var low: Int
    var high: Int
    var isScaled = false
    var scale = OSCLinearScale(input: (0, 1), output: (0, 1))
}

/// One piece of an address built from an event: literal bytes, or a capture in decimal.
enum OSCMappingSegment {
    case literal(OSCByteRange)
    case capture(Int)
}

/// How one rule is matched and written.
struct OSCReverseRule {
    var fields: OSCByteRange
    /// The address: literal runs and captures.
    var segments: OSCByteRange
    /// Into the text: the type tags, without the comma.
    var tags: OSCByteRange
}

/// The compiled rules, allocated once and never changed; reached through raw pointers on the
/// hot path.
final class OSCMappingTables: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; the buffers are owned here and freed in deinit.

    let rules: [OSCMappingRule]
    private let compiled: FixedBuffer<OSCReverseRule>
    private let fields: FixedBuffer<OSCReverseField>
    private let segments: FixedBuffer<OSCMappingSegment>
    private let text: FixedBytes
    /// Rule indices grouped by kind: the rules of kind `k` are `order[byKind[k]]`, in config order.
    private let order: FixedBuffer<Int>
    private let byKind: FixedBuffer<OSCByteRange>
    /// The longest address any rule can render to.
    private let addressCapacity: Int

    package init(rules: [OSCMappingRule]) {
        self.rules = rules
        var compiled: [OSCReverseRule] = []
        var fields: [OSCReverseField] = []
        var segments: [OSCMappingSegment] = []
        var text: [UInt8] = []
        var addressCapacity = 1
        func store(_ bytes: [UInt8]) -> OSCByteRange {
            defer { text += bytes }
            return OSCByteRange(offset: text.count, count: bytes.count)
        }
        for rule in rules {
            let kindFields = OSCMappingRule.fields(for: rule.kind)
            let fieldStart = fields.count
            for (field, value) in zip(kindFields, rule.values) {
                var reverse = OSCReverseField(
                    target: field.target, role: .ignored, low: field.range.lowerBound, high: field.range.upperBound)
                if let value {
                    if let scale = value.scale {
                        reverse.isScaled = true
                        reverse.scale = scale
                    }
                    switch value.source {
                    case .constant(let constant):
                        reverse.role = .equals
                        // Not finite once scaled: the translator never sends such a rule; the start stands in.
                        reverse.expected = value.result(constant, for: field) ?? field.range.lowerBound
                    case .argument(let index):
                        reverse.role = .argument
                        reverse.index = index
                    case .capture(let index):
                        reverse.role = .capture
                        reverse.index = index
                    }
                } else if field.target == .channel {
                    // The translator sends a rule that names no channel on the unset one.
                    reverse.role = .equals
                    reverse.expected = field.unsetResult
                }
                fields.append(reverse)
            }

            var pieces: [OSCMappingSegment] = []
            var literal: [UInt8] = []
            func flush() {
                if !literal.isEmpty { pieces.append(.literal(store(literal))) }
                literal = []
            }
            for part in rule.address.parts {
                literal.append(UInt8(ascii: "/"))
                switch part {
                case .literal(let bytes): literal += bytes
                case .any: break  // refused by checkSendable
                case .capture(let prefix, let index, let suffix):
                    literal += prefix
                    flush()
                    pieces.append(.capture(index))
                    literal = suffix
                }
            }
            flush()
            var length = 0
            for piece in pieces {
                switch piece {
                case .literal(let range): length += range.count
                case .capture: length += 10  // a sign and 9 digits: captures are clamped to that
                }
            }
            addressCapacity = max(addressCapacity, length)
            let segmentStart = segments.count
            segments += pieces
            compiled.append(
                OSCReverseRule(
                    fields: OSCByteRange(offset: fieldStart, count: fields.count - fieldStart),
                    segments: OSCByteRange(offset: segmentStart, count: segments.count - segmentStart),
                    tags: store(rule.argumentTypes ?? [])))
        }

        var order: [Int] = []
        var byKind: [OSCByteRange] = []
        for kind in MIDIEventKind.allCases {
            let start = order.count
            order += rules.indices.filter { rules[$0].kind == kind }
            byKind.append(OSCByteRange(offset: start, count: order.count - start))
        }
        self.compiled = .frozen(compiled)
        self.fields = .frozen(fields)
        self.segments = .frozen(segments)
        self.order = .frozen(order)
        self.byKind = .frozen(byKind)
        self.text = .frozen(text)
        self.addressCapacity = addressCapacity
    }

    // MARK: Matching

    func match(_ event: MIDIEvent) -> OSCMappingMatch? {
        let kind = Int(event.kind.rawValue)
        guard kind < byKind.count else { return nil }
        if let found = firstMatch(byKind[kind], event) { return found }
        guard event.kind == .noteOff else { return nil }
        var asNoteOn = event
        asNoteOn.kind = .noteOn
        asNoteOn.data2 = 0
        return firstMatch(byKind[Int(MIDIEventKind.noteOn.rawValue)], asNoteOn)
    }

    private func firstMatch(_ range: OSCByteRange, _ event: MIDIEvent) -> OSCMappingMatch? {
        var i = range.offset
        while i < range.offset &+ range.count {
            if let found = match(order[i], event) { return found }
            i &+= 1
        }
        return nil
    }

    private func match(_ index: Int, _ event: MIDIEvent) -> OSCMappingMatch? {
        let rule = compiled.baseAddress + index
        var result = OSCMappingMatch(rule: index)
        var argumentsSet: UInt32 = 0
        var capturesSet: UInt32 = 0
        let fieldBase = fields.baseAddress + rule.pointee.fields.offset
        var f = 0
        while f < rule.pointee.fields.count {
            let field = fieldBase + f
            f &+= 1
            let value = min(max(Self.value(field.pointee.target, event), field.pointee.low), field.pointee.high)
            switch field.pointee.role {
            case .ignored:
                continue
            case .equals:
                guard value == field.pointee.expected else { return nil }
            case .argument:
                let number = field.pointee.isScaled ? field.pointee.scale.invert(Double(value)) : Double(value)
                let index = field.pointee.index
                let tag = text.bytes.load(fromByteOffset: rule.pointee.tags.offset &+ index, as: UInt8.self)
                let bit: UInt32 = 1 << UInt32(index)
                if argumentsSet & bit != 0 {
                    guard Self.sameOnTheWire(result.arguments[index], number, tag) else { return nil }
                } else {
                    result.arguments[index] = number
                    argumentsSet |= bit
                }
            case .capture:
                var number = Double(value)
                if field.pointee.isScaled {
                    // A capture names which control: a value no control maps to matches none,
                    // rather than being clamped onto the last one.
                    let scale = field.pointee.scale
                    guard number >= min(scale.outputFrom, scale.outputTo),
                        number <= max(scale.outputFrom, scale.outputTo)
                    else { return nil }
                    number = scale.invert(number)
                }
                // As many digits as the translator reads back.
                let whole = Int64(min(max(number.rounded(), -999_999_999), 999_999_999))
                let index = field.pointee.index
                let bit: UInt32 = 1 << UInt32(index)
                if capturesSet & bit != 0 {
                    guard result.captures[index] == whole else { return nil }
                } else {
                    result.captures[index] = whole
                    capturesSet |= bit
                }
            }
        }
        return result
    }

    /// The value of a rule's field in `event`, as the translator sets it.
    @inline(__always)
    private static func value(_ target: OSCMappingTarget, _ event: MIDIEvent) -> Int {
        switch target {
        case .channel: Int(event.channel & 0x0F) &+ 1
        case .data1: Int(event.data1 & 0x7F)
        case .data2: Int(event.data2 & 0x7F)
        case .value: Int(event.value)
        case .parameter: Int(event.parameter)
        }
    }

    private static func sameOnTheWire(_ a: Double, _ b: Double, _ tag: UInt8) -> Bool {
        switch tag {
        case OSCTypeTag.int32, OSCTypeTag.int64: a.rounded() == b.rounded()
        case OSCTypeTag.float32: Float(a) == Float(b)
        default: a == b
        }
    }

    // MARK: Writing

    func write(_ match: OSCMappingMatch, into writer: inout OSCWriter) -> Bool {
        let rule = compiled[match.rule]
        let base = text.baseAddress
        return withUnsafeTemporaryAllocation(byteCount: addressCapacity, alignment: 1) { buffer in
            let start = buffer.baseAddress!
            var length = 0
            var s = rule.segments.offset
            while s < rule.segments.offset &+ rule.segments.count {
                switch segments[s] {
                case .literal(let range):
                    (start + length).copyMemory(from: base + range.offset, byteCount: range.count)
                    length &+= range.count
                case .capture(let index):
                    writeDecimal(match.captures[index], to: start, at: &length)
                }
                s &+= 1
            }
            let tags = UnsafeRawBufferPointer(start: base + rule.tags.offset, count: rule.tags.count)
            writer.beginMessage(address: UnsafeRawBufferPointer(start: start, count: length), typeTags: tags)
            var i = 0
            while i < tags.count {
                let number = match.arguments[i]
                switch tags[i] {
                case OSCTypeTag.int32:
                    writer.append(int32: Int32(min(max(number.rounded(), Double(Int32.min)), Double(Int32.max))))
                case OSCTypeTag.float32:
                    writer.append(float32: Float(number))
                case OSCTypeTag.int64:
                    // ±2^53: every whole Double in it converts exactly.
                    writer.append(
                        int64: Int64(min(max(number.rounded(), -9_007_199_254_740_992), 9_007_199_254_740_992)))
                case OSCTypeTag.double:
                    writer.append(double: number)
                case OSCTypeTag.true:
                    writer.append(bool: true)
                case OSCTypeTag.false:
                    writer.append(bool: false)
                case OSCTypeTag.nil:
                    writer.appendNil()
                case OSCTypeTag.impulse:
                    writer.appendImpulse()
                default:
                    break  // refused by checkSendable
                }
                i &+= 1
            }
            writer.endMessage()
            return writer.failure == nil
        }
    }
}
