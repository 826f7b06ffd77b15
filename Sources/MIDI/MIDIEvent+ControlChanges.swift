extension MIDIEvent {
    /// Whether this event is an assembled form (14-bit controller, RPN, NRPN) that goes on the
    /// wire as several control changes.
    @inlinable public var isAssembledController: Bool {
        kind == .controlChange14 || kind == .rpn || kind == .nrpn
    }

    /// Calls `body` with the plain control changes that carry this assembled event on the wire:
    /// MSB then LSB for a 14-bit controller (controllers N and N+32); parameter number MSB/LSB
    /// (101/100 for RPN, 99/98 for NRPN) then data entry MSB/LSB (6/38) for parameters.
    /// Any other event is handed over unchanged.
    package func forEachControlChange(_ body: (MIDIEvent) -> Void) {
        func cc(_ controller: UInt8, _ value: UInt8) {
            var event = MIDIEvent.controlChange(channel: channel, controller: controller, value: value)
            event.port = port
            event.timestamp = timestamp
            body(event)
        }
        let data = UInt16(truncatingIfNeeded: max(0, min(value, 16383)))
        let number = parameter & 0x3FFF
        switch kind {
        case .controlChange14:
            cc(UInt8(number & 31), UInt8(data >> 7))
            cc(UInt8(number & 31) + 32, UInt8(data & 127))
        case .rpn, .nrpn:
            let (msb, lsb): (UInt8, UInt8) = kind == .rpn ? (101, 100) : (99, 98)
            cc(msb, UInt8(number >> 7))
            cc(lsb, UInt8(number & 127))
            cc(6, UInt8(data >> 7))
            cc(38, UInt8(data & 127))
        default:
            body(self)
        }
    }
}
