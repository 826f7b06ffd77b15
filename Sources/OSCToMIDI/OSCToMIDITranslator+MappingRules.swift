import MIDI
import OSC
import OSCMapping
import Storage

/// Mapping rules (``OSCMappingRule``): the first dialect tried, the user's own.
extension OSCToMIDITranslator {
    /// Sends `rule`'s event for `message` to the rule's outputs; false when the message's
    /// arguments are not what the rule takes.
    package func apply(
        _ rule: OSCMappingRule, _ message: OSCMessageView, _ arguments: NumericArguments,
        _ captures: TupleArray8<Int32>, _ timestamp: UInt64, _ sink: (MIDIEvent) -> Void
    ) -> Bool {
        if let types = rule.argumentTypes {
            guard types.count == message.typeTags.count else { return false }
            var i = 0
            while i < types.count {
                let wanted = types[i]
                let got = message.typeTags[i]
                if NumericArguments.isNumeric(wanted) ? !NumericArguments.isNumeric(got) : wanted != got {
                    return false
                }
                i += 1
            }
        }
        var event = MIDIEvent(rule.kind, timestamp: timestamp)
        let fields = OSCMappingRule.fields(forKindIndex: rule.kind)
        var i = 0
        while i < fields.count {
            let field = fields[i]
            let result: Int
            if let value = rule.values[i] {
                let raw: Double
                switch value.source {
                case .constant(let constant): raw = constant
                case .capture(let index): raw = Double(captures[index])
                case .argument(let index):
                    guard let argument = arguments[index] else { return false }
                    raw = argument
                }
                guard let set = value.result(raw, for: field) else { return false }
                result = set
            } else {
                result = field.unsetResult
            }
            switch field.target {
            case .channel: event.channel = UInt8(result - 1)
            case .data1: event.data1 = UInt8(result)
            case .data2: event.data2 = UInt8(result)
            case .value: event.value = Int32(result)
            case .parameter: event.parameter = UInt16(result)
            }
            i += 1
        }
        switch rule.output {
        case .port(let index):
            event.port = UInt16(index)
            sink(event)
        case .all:
            var port = 0
            while port < outputNames.count {
                event.port = UInt16(port)
                sink(event)
                port += 1
            }
        }
        return true
    }
}

extension OSCMappingRule {
    /// ``fields(for:)`` without building an array on the hot path: one table, made once.
    package static func fields(forKindIndex kind: MIDIEventKind) -> [OSCMappingField] {
        fieldTable[Int(kind.rawValue)]
    }

    private static let fieldTable: [[OSCMappingField]] = MIDIEventKind.allCases.map { fields(for: $0) }
}
