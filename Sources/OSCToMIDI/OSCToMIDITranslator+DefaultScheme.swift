import MIDI
import OSCMapping

/// The default scheme's own addresses, `/midi/{port}/{channel}/note_on ,ii` and so on: what
/// ``OSCScheme/default`` sends, accepted back.
extension OSCToMIDITranslator {
    package func resolveDefault(_ address: AddressParts) -> AddressResolution {
        let outputs = matchOutputs(address.part(1))
        guard outputs.any else { return AddressResolution(.unknownAddress) }
        if address.count == 3 {
            let type = address.part(2)
            if Self.equal(type, "sysex") { return AddressResolution(.sysexBlob, outputs: outputs) }
            if let kind = Self.argumentlessKind(type) {
                return AddressResolution(.argumentless, kind: kind, outputs: outputs)
            }
            if Self.equal(type, "mtc_quarter_frame") || Self.equal(type, "song_select") {
                let kind: MIDIEventKind = Self.equal(type, "song_select") ? .songSelect : .mtcQuarterFrame
                return AddressResolution(.dataByte, kind: kind, outputs: outputs)
            }
            if Self.equal(type, "song_position") {
                return AddressResolution(.songPosition, kind: .songPosition, outputs: outputs)
            }
            return AddressResolution(.unknownAddress)
        }
        let channelPart = address.part(2)
        guard let channel = Self.decimal(channelPart) else { return AddressResolution(.unknownAddress) }
        guard channel >= 1 && channel <= 16 else { return AddressResolution(.malformed) }
        let type = address.part(3)
        let action: AddressResolution.Action
        let kind: MIDIEventKind
        if Self.equal(type, "note_on") {
            (action, kind) = (.twoDataBytes, .noteOn)
        } else if Self.equal(type, "note_off") {
            (action, kind) = (.twoDataBytes, .noteOff)
        } else if Self.equal(type, "poly_pressure") {
            (action, kind) = (.twoDataBytes, .polyPressure)
        } else if Self.equal(type, "cc") {
            (action, kind) = (.twoDataBytes, .controlChange)
        } else if Self.equal(type, "program") {
            (action, kind) = (.dataByte, .programChange)
        } else if Self.equal(type, "pressure") {
            (action, kind) = (.dataByte, .channelPressure)
        } else if Self.equal(type, "pitch_bend") {
            (action, kind) = (.pitchBend, .pitchBend)
        } else if Self.equal(type, "cc14") {
            (action, kind) = (.parameter, .controlChange14)
        } else if Self.equal(type, "rpn") {
            (action, kind) = (.parameter, .rpn)
        } else if Self.equal(type, "nrpn") {
            (action, kind) = (.parameter, .nrpn)
        } else {
            return AddressResolution(.unknownAddress)
        }
        return AddressResolution(action, kind: kind, channel: UInt8(channel - 1), outputs: outputs)
    }

    package static func argumentlessKind(_ type: UnsafeRawBufferPointer) -> MIDIEventKind? {
        if equal(type, "clock") { return .clock }
        if equal(type, "start") { return .start }
        if equal(type, "stop") { return .stop }
        if equal(type, "continue") { return .continue }
        if equal(type, "active_sensing") { return .activeSensing }
        if equal(type, "reset") { return .reset }
        if equal(type, "tune_request") { return .tuneRequest }
        return nil
    }
}
