extension MIDIEvent: CustomStringConvertible {
    /// One line for logs and the monitor, like aseqdump's: `ch 1  note-on  C4 (60)  vel 100`.
    ///
    /// Channels are shown 1...16. This builds strings: keep it off the hot path.
    package var description: String {
        let name = kind.description.replacing("_", with: "-")
        let channelPrefix = "ch \(Int(channel) + 1)  "
        switch kind {
        case .noteOn, .noteOff:
            return channelPrefix
                + "\(name)  \(NoteName.format(data1 & 0x7F)) (\(data1))  vel \(data2)"
        case .polyPressure:
            return channelPrefix + "\(name)  \(NoteName.format(data1 & 0x7F)) (\(data1))  \(data2)"
        case .controlChange:
            return channelPrefix + "\(name)  \(data1)  \(data2)"
        case .programChange, .channelPressure:
            return channelPrefix + "\(name)  \(data1)"
        case .pitchBend:
            return channelPrefix + "\(name)  \(value)"
        case .controlChange14, .rpn, .nrpn:
            return channelPrefix + "\(name)  \(parameter)  \(value)"
        case .mtcQuarterFrame:
            return "\(name)  type \(data1 >> 4)  value \(data1 & 0x0F)"
        case .songPosition:
            return "\(name)  \(value)"
        case .songSelect:
            return "\(name)  \(data1)"
        case .sysex:
            return "\(name)  \(sysex.length) bytes"
        case .tuneRequest, .clock, .start, .continue, .stop, .activeSensing, .reset:
            return name
        }
    }
}
