import MIDI
import MIDIToOSC
import OSCMapping
import OSCToMIDI
import OSC
import TestSupport
import Testing

/// `quickEvent(datagram:timestamp:cache:)` against validating the datagram and translating it the
/// general way, on random datagrams: whenever the quick path answers, the general path must have
/// translated the datagram into exactly that one event.
@Suite struct QuickEventTests {
    static let addresses = [
        "/*/note_on", "/*/note_off", "/*/control_change", "/*/poly_pressure", "/*/pitch_bend",
        "/*/channel_pressure", "/*/program_change", "/synth/note_on", "/thru/pitch_bend", "/thru/clock",
        "/synth/raw", "/midi/synth/3/note_on", "/midi/thru/16/cc", "/midi/thru/1/note_off",
        "/midi/synth/2/poly_pressure", "/midi/thru/1/program", "/midi/*/1/note_on", "/midi/synth/clock",
        "/midi/synth/17/note_on", "/nowhere/note_on",
    ]

    /// A random message at one of ``addresses``: mostly all-`i` arguments, some of every count
    /// and type, values around and outside the MIDI ranges.
    static func randomMessage(_ random: inout SplitMix64) -> OSCMessage {
        let address = addresses[Int(random.next() % UInt64(addresses.count))]
        // Mostly the count the address takes: o2m's notes and controllers 3, the rest 2.
        let osmidThree = ["note_on", "note_off", "control_change", "poly_pressure"].contains {
            address.hasSuffix($0) && !address.hasPrefix("/midi/")
        }
        let count = random.next() % 4 == 0 ? Int(random.next() % 5) : osmidThree ? 3 : 2
        var arguments: [OSCArgument] = []
        for _ in 0..<count {
            let value: Int32 =
                switch random.next() % 8 {
                case 0: Int32(bitPattern: UInt32(truncatingIfNeeded: random.next()))
                case 1: Int32(random.next() % 40) - 20
                default: Int32(random.next() % 300) - 10
                }
            switch random.next() % 16 {
            case 0: arguments.append(.float32(Float(value) + 0.4))
            case 1: arguments.append(.double(Double(value)))
            case 2: arguments.append(.string("x"))
            default: arguments.append(.int32(value))
            }
        }
        return OSCMessage(address, arguments)
    }

    /// The message's bytes, sometimes broken after the address (extra, missing or stray bytes).
    static func randomDatagram(_ random: inout SplitMix64) throws -> [UInt8] {
        let message = randomMessage(&random)
        var bytes = try message.serialize()
        switch random.next() % 16 {
        case 0: bytes += [0, 0, 0, 1]
        case 1: bytes.removeLast(min(4, bytes.count))
        case 2: bytes.append(0)
        case 3:
            // A stray byte in the tag string or the arguments.
            let start = OSCWriter.padded(message.address.utf8.count + 1)
            if bytes.count > start + 2 {
                bytes[start + 2 + Int(random.next() % UInt64(bytes.count - start - 2))] ^= 0x41
            }
        default: break
        }
        return bytes
    }

    /// The general way: validate, then translate through `cache` (which this fills).
    static func general(
        _ translator: OSCToMIDITranslator, _ cache: OSCAddressCache, _ bytes: [UInt8], timestamp: UInt64
    ) -> (OSCToMIDITranslator.Outcome, [MIDIEvent])? {
        bytes.withUnsafeBytes { raw in
            guard case .message(let message)? = try? OSCPacketView(raw) else { return nil }
            var events: [MIDIEvent] = []
            let outcome = translator.translate(message, timestamp: timestamp, cache: cache) { events.append($0) }
            return (outcome, events)
        }
    }

    @Test(arguments: [["synth", "thru"], ["synth"]])
    func theQuickEventIsWhatTheGeneralPathSends(outputs: [String]) throws {
        let translator = OSCToMIDITranslator(outputNames: outputs)
        let cache = OSCAddressCache()
        let reference = OSCAddressCache()
        var random = SplitMix64(seed: 0x0517_0517 &+ UInt64(outputs.count))
        var quick = 0
        var refused = 0
        for i in 0..<20_000 {
            let bytes = try Self.randomDatagram(&random)
            let timestamp = UInt64(i)
            let event = bytes.withUnsafeBytes {
                translator.quickEvent(datagram: $0, timestamp: timestamp, cache: cache)
            }
            let expected = Self.general(translator, reference, bytes, timestamp: timestamp)
            // The bridge's order: a miss goes the general way through the same cache, filling it.
            _ = Self.general(translator, cache, bytes, timestamp: timestamp)
            if let event {
                quick += 1
                #expect(expected?.0 == .translated && expected?.1 == [event], "\(bytes)")
            } else if expected == nil || expected?.0 != .translated {
                refused += 1
            }
        }
        // Both kinds are common enough here for the comparison to mean something.
        #expect(quick > 500)
        #expect(refused > 2_000)
    }

    @Test func onlyOneChannelEventToOneOutputGoesTheQuickWay() throws {
        let translator = OSCToMIDITranslator(outputNames: ["synth", "thru"])
        let cache = OSCAddressCache()
        func quick(_ message: OSCMessage) throws -> MIDIEvent? {
            let bytes = try message.serialize()
            _ = Self.general(translator, cache, bytes, timestamp: 0)
            return bytes.withUnsafeBytes { translator.quickEvent(datagram: $0, timestamp: 5, cache: cache) }
        }
        var noteOn = MIDIEvent.noteOn(channel: 15, note: 60, velocity: 127)
        (noteOn.port, noteOn.timestamp) = (1, 5)
        #expect(try quick(OSCMessage("/thru/note_on", [.int32(20), .int32(188), .int32(200)])) == noteOn)
        var bend = MIDIEvent.pitchBend(channel: 1, bend: 808)
        bend.timestamp = 5
        #expect(try quick(OSCMessage("/synth/pitch_bend", [.int32(2), .int32(9000)])) == bend)
        var cc = MIDIEvent.controlChange(channel: 15, controller: 7, value: 64)
        (cc.port, cc.timestamp) = (1, 5)
        #expect(try quick(OSCMessage("/midi/thru/16/cc", [.int32(7), .int32(64)])) == cc)
        // Both outputs; all 16 channels; a float; a value out of range; other tags.
        #expect(try quick(OSCMessage("/*/note_on", [.int32(1), .int32(60), .int32(100)])) == nil)
        #expect(try quick(OSCMessage("/synth/note_on", [.int32(0), .int32(60), .int32(100)])) == nil)
        #expect(try quick(OSCMessage("/synth/note_on", [.int32(1), .float32(60), .int32(100)])) == nil)
        #expect(try quick(OSCMessage("/midi/thru/16/cc", [.int32(7), .int32(128)])) == nil)
        #expect(try quick(OSCMessage("/synth/program_change", [.int32(1), .int32(3)])) != nil)
        #expect(try quick(OSCMessage("/synth/clock", [])) == nil)
    }
}
