import MIDI
import MIDIToOSC
import OSCMapping
import OSCToMIDI
import OSC

/// What the bridge's OSC thread does with one datagram short of the route (`OSCToMIDISide`):
/// validate it, then translate the message. Benchmarks/mappings.sh and growth.sh replace this
/// file when they build an older commit, with what that commit's bridge did.
final class BridgePath {
    let translator: OSCToMIDITranslator

    /// The path for `translator`, which has `rules` mapping rules.
    init(_ translator: OSCToMIDITranslator, rules: Int) {
        self.translator = translator
    }

    func translate(_ datagram: UnsafeRawBufferPointer, now: UInt64, into sink: (MIDIEvent) -> Void) {
        guard case .message(let message)? = try? OSCPacketView(datagram) else { return }
        _ = translator.translate(message, timestamp: now, into: sink)
    }
}
