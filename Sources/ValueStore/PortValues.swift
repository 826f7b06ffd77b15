import MIDI
import Storage
import Synchronization

/// The last value of every controller, program, pitch bend and pressure one port carried, per
/// channel: what a receiver that lost its state needs to be sent again, and what a reader on
/// another thread (OSCQuery's VALUE, a WebSocket LISTEN) shows.
///
/// **What is kept** (``record(_:)``): control changes as they arrived (7-bit), 14-bit
/// controllers, RPN and NRPN values as assembled, program, channel pressure, pitch bend and
/// poly pressure per note. Not kept: notes (a replayed note-on would sound; held notes are
/// `HeldNotes`' and recovery's job), system messages, the channel mode controllers (120-127:
/// commands, not values), and the data entry and parameter select controllers (6, 38, 96-101)
/// as plain controllers, since alone they mean nothing and replayed out of order they would
/// change whichever parameter the receiver has selected: a route that wants RPNs kept
/// assembles them. A 7-bit controller 0...63 and the 14-bit controller it is half of
/// replace each other, so the table holds one truth for the pair.
///
/// **Resets**: Reset All Controllers (CC 121) sets what RP-015 resets back to its default, in
/// the slots that had a value (``ResetAllControllers``); System Reset clears the port, as does
/// ``clear()`` when the port goes away.
///
/// **Threads**: one writer, the thread that owns the port's direction, calls ``record(_:)``
/// and ``clear()``; the replay (``replay(_:limit:_:)``) runs there too. Any thread may read
/// (``event(at:)``, ``parameter(_:channel:number:)``, ``takeChanges(_:)``) without a lock:
/// each slot is one atomic word, so a load never sees half a value, and no seqlock is needed.
///
/// **Memory**, all allocated at init and never after: 16 channels x 296 slots x 4 bytes
/// (18,944 bytes), one dirty bit per slot (592 bytes) and 8 bytes per RPN/NRPN entry (2,048 for
/// the default 256): 21,584 bytes a port, ``memory(parameterCapacity:)``.
package final class PortValues: Sendable {
    /// The bridge port (input or output index) whose values these are; replayed events carry it.
    package let port: UInt16

    // Slot `ValueSlot.index`'s word (`StoredWord`). Only the writer stores; anyone loads.
    nonisolated(unsafe) private let slots: FixedBuffer<Atomic<UInt32>>
    // Bit `i` set: slot `i` changed since a reader last took the changes (`takeChanges`).
    nonisolated(unsafe) private let dirty: FixedBuffer<Atomic<UInt64>>
    nonisolated(unsafe) private let parameters: ParameterTable

    private static var dirtyWords: Int { (ValueSlot.count + 63) / 64 }

    /// An empty table for `port`, keeping up to `parameterCapacity` RPN and NRPN values.
    package init(port: UInt16, parameterCapacity: Int = 256) {
        self.port = port
        slots = FixedBuffer(count: ValueSlot.count) { _ in Atomic(StoredWord.none) }
        dirty = FixedBuffer(count: Self.dirtyWords) { _ in Atomic(0) }
        parameters = ParameterTable(capacity: parameterCapacity)
    }

    /// The bytes a table takes with `parameterCapacity` RPN/NRPN entries (object headers aside).
    static func memory(parameterCapacity: Int = 256) -> Int {
        ValueSlot.count * MemoryLayout<UInt32>.stride + dirtyWords * MemoryLayout<UInt64>.stride
            + parameterCapacity * MemoryLayout<UInt64>.stride
    }

    // MARK: Writing (the owning thread only)

    /// Keeps what `event` sets (see the type's documentation); anything else is ignored.
    /// Allocates nothing; at most two atomic operations per slot that changes.
    package func record(_ event: MIDIEvent) {
        if event.kind == .reset {
            clear()
            return
        }
        guard event.channel < 16 else { return }
        let channel = event.channel
        switch event.kind {
        case .controlChange:
            recordController(event.data1 & 127, Int32(event.data2 & 127), channel: channel)
        case .controlChange14:
            guard event.parameter < 32 else { return }
            let number = UInt8(event.parameter)
            let value = clamp14(event.value)
            write(.controller14(number, channel: channel), StoredWord.value(value))
            erase(.controller(number, channel: channel))
            erase(.controller(number + 32, channel: channel))
            write(.last(.controlChange14, channel: channel)!, StoredWord.keyed(UInt16(number), value))
        case .polyPressure:
            let value = Int32(event.data2 & 127)
            write(.polyPressure(note: event.data1, channel: channel), StoredWord.value(value))
            write(.last(.polyPressure, channel: channel)!, StoredWord.keyed(UInt16(event.data1 & 127), value))
        case .programChange:
            write(.program(channel: channel), StoredWord.value(Int32(event.data1 & 127)))
        case .channelPressure:
            write(.channelPressure(channel: channel), StoredWord.value(Int32(event.data1 & 127)))
        case .pitchBend:
            write(.pitchBend(channel: channel), StoredWord.value(clamp14(event.value &+ 8192)))
        case .rpn, .nrpn:
            let value = clamp14(event.value)
            parameters.record(event.kind == .nrpn, channel: channel, number: event.parameter, value: value)
            write(.last(event.kind, channel: channel)!, StoredWord.keyed(event.parameter, value))
        default:
            break
        }
    }

    /// Whether controller `number` is a value worth keeping as a plain controller (see the
    /// type's documentation for the ones that are not).
    static func keepsValue(ofController number: UInt8) -> Bool {
        switch number {
        case 6, 38, 96...101, 120...127: false
        default: true
        }
    }

    private func recordController(_ number: UInt8, _ value: Int32, channel: UInt8) {
        write(.last(.controlChange, channel: channel)!, StoredWord.keyed(UInt16(number), value))
        if number == 121 {
            resetControllers(channel: channel)
            return
        }
        guard Self.keepsValue(ofController: number) else { return }
        write(.controller(number, channel: channel), StoredWord.value(value))
        // A half of a pair sent alone changes the pair: the assembled value no longer holds.
        if number < 64 { erase(.controller14(number & 31, channel: channel)) }
    }

    private func resetControllers(channel: UInt8) {
        var number: UInt8 = 0
        while number < 120 {
            if ResetAllControllers.resets(number) {
                reset(.controller(number, channel: channel), to: ResetAllControllers.defaultValue(of: number))
                if number < 32 {
                    reset(
                        .controller14(number, channel: channel), to: ResetAllControllers.defaultValue14(of: number))
                }
            }
            number += 1
        }
        reset(.pitchBend(channel: channel), to: ResetAllControllers.pitchBendCentre)
        reset(.channelPressure(channel: channel), to: 0)
        var note: UInt8 = 0
        while note < 128 {
            reset(.polyPressure(note: note, channel: channel), to: 0)
            note += 1
        }
    }

    /// Sets `slot` to `value` if it has a value: a reset tells the receiver its defaults, so a
    /// value it had is now the default, and one it never had stays unsent.
    private func reset(_ slot: ValueSlot, to value: Int32) {
        guard StoredWord.isSet(slots[slot.index].load(ordering: .relaxed)) else { return }
        write(slot, StoredWord.value(value))
    }

    /// Forgets every value of the port: the port went away, or a System Reset went through it.
    func clear() {
        var index = 0
        while index < ValueSlot.count {
            erase(ValueSlot(index: index))
            index += 1
        }
        parameters.clear()
    }

    private func erase(_ slot: ValueSlot) { write(slot, StoredWord.none) }

    @inline(__always)
    private func write(_ slot: ValueSlot, _ word: UInt32) {
        let index = slot.index
        // Relaxed: only this thread stores, so it reads back its own last store.
        guard slots[index].load(ordering: .relaxed) != word else { return }
        slots[index].store(word, ordering: .relaxed)
        // Releasing pairs with the acquiring exchange in `takeChanges`: a reader that takes the
        // bit then loads the slot sees this word or a later one.
        dirty[index >> 6].bitwiseOr(1 &<< UInt64(index & 63), ordering: .releasing)
    }

    // MARK: Reading (any thread)

    /// The value in `slot` as the event that sets it (on this port), or `nil` if it has none.
    /// For a last word, the last event of its kind.
    package func event(at slot: ValueSlot) -> MIDIEvent? {
        let word = slots[slot.index].load(ordering: .relaxed)
        guard StoredWord.isSet(word) else { return nil }
        let value = StoredWord.value(of: word)
        let key = slot.isLast ? StoredWord.key(of: word) : UInt16(slot.key)
        let data1 = UInt8(truncatingIfNeeded: key & 127)
        let data2 = UInt8(truncatingIfNeeded: value & 127)
        let channel = slot.channel
        switch slot.kind {
        case .controlChange, .polyPressure:
            return MIDIEvent(slot.kind, channel: channel, data1: data1, data2: data2, port: port)
        case .programChange, .channelPressure:
            return MIDIEvent(slot.kind, channel: channel, data1: data2, port: port)
        case .pitchBend:
            return MIDIEvent(.pitchBend, channel: channel, value: value - 8192, port: port)
        default:
            return MIDIEvent(slot.kind, channel: channel, value: value, parameter: key, port: port)
        }
    }

    /// Whether `slot` has a value.
    func hasValue(_ slot: ValueSlot) -> Bool {
        StoredWord.isSet(slots[slot.index].load(ordering: .relaxed))
    }

    /// The value of RPN or NRPN `number` (0...16383) on `channel`, or `nil` if the table does
    /// not hold it. `kind` is ``MIDIEventKind/rpn`` or ``MIDIEventKind/nrpn``.
    package func parameter(_ kind: MIDIEventKind, channel: UInt8, number: UInt16) -> Int32? {
        guard kind == .rpn || kind == .nrpn else { return nil }
        return parameters.value(kind == .nrpn, channel: channel, number: number)
    }

    /// The most RPN and NRPN values kept at once.
    var parameterCapacity: Int { parameters.capacity }

    /// How many RPN and NRPN values are kept.
    var parameterCount: Int { parameters.count }

    /// How many RPN or NRPN values were forgotten to make room for newer ones: a replay misses
    /// them, so the status shows them.
    package var parameterEvictions: Int { parameters.evictions.load(ordering: .relaxed) }

    /// RPN/NRPN entry `index` (0 ..< ``parameterCapacity``) as an event on this port, or `nil`
    /// when it is empty.
    func parameterEntry(_ index: Int) -> MIDIEvent? {
        guard var event = parameters.entry(at: index) else { return nil }
        event.port = port
        return event
    }

    /// Calls `body` with every slot that changed since the last call, lowest first, and clears
    /// the record of them: for a reader that forwards changes (a WebSocket LISTEN). A slot
    /// that was cleared is reported too; ``event(at:)`` then gives `nil`. RPN and NRPN changes
    /// show as their channel's last word (``ValueSlot/last(_:channel:)``).
    package func takeChanges(_ body: (ValueSlot) -> Void) {
        var word = 0
        while word < dirty.count {
            // Acquiring pairs with the releasing bitwiseOr in `write`.
            var bits = dirty[word].exchange(0, ordering: .acquiring)
            while bits != 0 {
                body(ValueSlot(index: word << 6 | bits.trailingZeroBitCount))
                bits &= bits &- 1
            }
            word += 1
        }
    }
}
