import MIDI
import OSC
import OSCMapping
import Storage

/// The output ports: which ones a `{port}` part names, and handing an event to each.
extension OSCToMIDITranslator {
    /// Output indices as a bit set (the bridge has at most 256 ports).
    package struct OutputSet {
        var words = TupleArray4<UInt64>(repeating: 0)
        var any = false

        static func port(_ index: Int) -> OutputSet {
            var set = OutputSet()
            set.insert(index)
            return set
        }

        mutating func insert(_ index: Int) {
            guard index >= 0 && index < 256 else { return }
            words[index >> 6] |= 1 << UInt64(index & 63)
            any = true
        }

        func contains(_ index: Int) -> Bool {
            index >= 0 && index < 256 && words[index >> 6] & (1 << UInt64(index & 63)) != 0
        }
    }

    package func emit(_ event: MIDIEvent, to outputs: OutputSet, _ sink: (MIDIEvent) -> Void) {
        var copy = event
        var port = 0
        while port < outputNames.count {
            if outputs.contains(port) {
                copy.port = UInt16(port)
                sink(copy)
            }
            port += 1
        }
    }

    /// The outputs a `{port}` part names: by sanitised name, or every match of an OSC pattern.
    package func matchOutputs(_ part: UnsafeRawBufferPointer) -> OutputSet {
        var set = OutputSet()
        let isPattern = OSCAddressPattern.isPattern(part)
        var index = 0
        while index < outputNames.count {
            let matched = outputNames[index].withUnsafeBytes { name in
                isPattern ? OSCAddressPattern.matches(pattern: part, address: name) : Self.sanitisedEqual(part, name)
            }
            if matched { set.insert(index) }
            index += 1
        }
        return set
    }

    /// Whether `part`, sanitised as m2o sanitises port names, equals `name` (already sanitised).
    package static func sanitisedEqual(_ part: UnsafeRawBufferPointer, _ name: UnsafeRawBufferPointer) -> Bool {
        guard part.count == name.count else { return false }
        var i = 0
        while i < part.count {
            var byte = part[i]
            switch byte {
            case 0..<0x21, 0x7F, UInt8(ascii: "#"), UInt8(ascii: "*"), UInt8(ascii: ","), UInt8(ascii: "/"),
                UInt8(ascii: "?"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "{"), UInt8(ascii: "}"):
                byte = UInt8(ascii: "_")
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                byte += 0x20
            default:
                break
            }
            if byte != name[i] { return false }
            i += 1
        }
        return true
    }
}
