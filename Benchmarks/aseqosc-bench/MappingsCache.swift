import MIDIToOSC
import OSCMapping
import OSCToMIDI

/// The address cache the bridge makes for a translator with `rules` mapping rules
/// (`OSCToMIDISide`). Benchmarks/mappings.sh replaces this file when it builds an older commit,
/// whose bridge made a fixed 256-slot cache.
func bridgeAddressCache(rules: Int) -> OSCAddressCache {
    OSCAddressCache(capacity: OSCAddressCache.capacity(forRules: rules))
}
