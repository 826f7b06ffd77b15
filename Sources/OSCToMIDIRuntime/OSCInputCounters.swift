import Storage
import Synchronization

/// Counters of the OSC -> MIDI direction, readable from any thread (relaxed: statistics only).
package final class OSCInputCounters: Sendable {
    /// OSC messages read (a bundle counts its messages).
    package let messages = Atomic<Int>(0)
    /// Messages that became at least one MIDI event.
    package let translated = Atomic<Int>(0)
    /// Datagrams that are not valid OSC, by ``MalformedOSC`` reason.
    nonisolated(unsafe) package let malformed = FixedBuffer(count: 16) { _ in Atomic<Int>(0) }
    /// Messages at a known address whose arguments do not fit it.
    package let malformedMessages = Atomic<Int>(0)
    /// Messages no rule or built-in address matches.
    package let unknownAddress = Atomic<Int>(0)
    /// SysEx messages refused because `osc.sysex` is off.
    package let sysexDisabled = Atomic<Int>(0)
    /// SysEx messages with no room in the store.
    package let sysexDropped = Atomic<Int>(0)
    /// Bundles whose time tag had passed on arrival (sent at once).
    package let late = Atomic<Int>(0)
    /// Bundles scheduled on the sequencer queue for later.
    package let scheduled = Atomic<Int>(0)
}
