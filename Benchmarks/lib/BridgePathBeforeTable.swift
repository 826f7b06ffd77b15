// Copied by Benchmarks/lib/before-table.sh into an older tree (before issue 35), where the module
// MIDIOSC and the address cache exist; it does not build in this tree.
import MIDI
import MIDIOSC
import OSC

/// What the bridge did before the address table: the quick path, the cached-datagram path,
/// else validate and translate, through an address cache sized to the rules.
final class BridgePath {
    let translator: OSCToMIDITranslator
    let cache: OSCAddressCache

    init(_ translator: OSCToMIDITranslator, rules: Int) {
        self.translator = translator
        cache = OSCAddressCache(capacity: OSCAddressCache.capacity(forRules: rules))
    }

    func translate(_ datagram: UnsafeRawBufferPointer, now: UInt64, into sink: (MIDIEvent) -> Void) {
        if let event = translator.quickEvent(datagram: datagram, timestamp: now, cache: cache) {
            sink(event)
        } else if (try? translator.translate(datagram: datagram, timestamp: now, cache: cache, into: sink)) == nil,
            case .message(let message)? = try? OSCPacketView(datagram)
        {
            _ = translator.translate(message, timestamp: now, cache: cache, into: sink)
        }
    }
}
