import MIDI
import MIDIToOSC
import OSCMapping
import OSCToMIDI
import OSC
import Testing

/// Translates each message through `cache`, returning the outcomes and the events as
/// `port:kind:channel:data1:data2`.
private func run(
    _ translator: OSCToMIDITranslator, _ cache: OSCAddressCache, _ messages: [OSCMessage]
) throws -> ([OSCToMIDITranslator.Outcome], [String]) {
    var outcomes: [OSCToMIDITranslator.Outcome] = []
    var events: [String] = []
    for message in messages {
        let bytes = try message.serialize()
        try bytes.withUnsafeBytes { raw in
            let view = try OSCMessageView(raw)
            outcomes.append(
                translator.translate(view, cache: cache) { event in
                    events.append("\(event.port):\(event.kind):\(event.channel):\(event.data1):\(event.data2)")
                })
        }
    }
    return (outcomes, events)
}

private func noteOn(_ address: String, _ channel: Int32 = 1, _ note: Int32 = 60) -> OSCMessage {
    OSCMessage(address, [.int32(channel), .int32(note), .int32(100)])
}

@Suite struct AddressCacheTests {
    @Test func aRepeatedAddressIsResolvedOnce() throws {
        let translator = OSCToMIDITranslator(outputNames: ["Synth A", "thru"])
        let cache = OSCAddressCache()
        let messages = (0..<100).map { noteOn("/*/note_on", 1, Int32(36 + $0 % 48)) }
        let (outcomes, events) = try run(translator, cache, messages)
        #expect(outcomes.allSatisfy { $0 == .translated })
        // `*` names both outputs.
        #expect(events.count == 200)
        #expect(events[0] == "0:note_on:0:36:100" && events[1] == "1:note_on:0:36:100")
        #expect(cache.misses == 1)
    }

    @Test func argumentsAreCheckedOnEveryMessageAtACachedAddress() throws {
        let translator = OSCToMIDITranslator(outputNames: ["thru"])
        let cache = OSCAddressCache()
        let messages = [
            noteOn("/thru/note_on"),
            OSCMessage("/thru/note_on", [.int32(1), .int32(60)]),
            OSCMessage("/thru/note_on", [.int32(1), .string("x"), .int32(1)]),
            OSCMessage("/thru/note_on", [.int32(1), .float32(61.4), .double(200)]),
        ]
        let (outcomes, events) = try run(translator, cache, messages)
        #expect(outcomes == [.translated, .malformed, .malformed, .translated])
        #expect(events == ["0:note_on:0:60:100", "0:note_on:0:61:127"])
        #expect(cache.misses == 1)
    }

    @Test func aCacheNeverAnswersForAnotherTranslator() throws {
        let cache = OSCAddressCache()
        let old = OSCToMIDITranslator(outputNames: ["synth"])
        let new = OSCToMIDITranslator(outputNames: ["piano", "synth"])
        #expect(try run(old, cache, [noteOn("/synth/note_on")]).1 == ["0:note_on:0:60:100"])
        // The same address after a reload that renumbered the outputs.
        #expect(try run(new, cache, [noteOn("/synth/note_on")]).1 == ["1:note_on:0:60:100"])
        #expect(
            try run(OSCToMIDITranslator(outputNames: ["piano"]), cache, [noteOn("/synth/note_on")]).0 == [
                .unknownAddress
            ])
        #expect(cache.misses == 3)
    }

    @Test func addressesSharingASlotDisplaceEachOtherAndStayCorrect() throws {
        let translator = OSCToMIDITranslator(outputNames: ["a", "b"])
        let cache = OSCAddressCache(capacity: 1)
        let messages = (0..<10).map { noteOn($0 % 2 == 0 ? "/a/note_on" : "/b/note_off", 2, 50) }
        let (outcomes, events) = try run(translator, cache, messages)
        #expect(outcomes.allSatisfy { $0 == .translated })
        #expect(events == (0..<10).map { $0 % 2 == 0 ? "0:note_on:1:50:100" : "1:note_off:1:50:100" })
        #expect(cache.misses == 10)
    }

    @Test func anAddressTooLongToKeepIsResolvedEveryTime() throws {
        let name = String(repeating: "n", count: OSCAddressCache.maximumAddressLength)
        let translator = OSCToMIDITranslator(outputNames: [name])
        let cache = OSCAddressCache()
        let (outcomes, events) = try run(translator, cache, [noteOn("/\(name)/note_on"), noteOn("/\(name)/note_on")])
        #expect(outcomes == [.translated, .translated])
        #expect(events.count == 2)
        #expect(cache.misses == 2)
    }

    @Test func unknownAddressesAreRememberedAsUnknown() throws {
        let translator = OSCToMIDITranslator(outputNames: ["thru"])
        let cache = OSCAddressCache()
        let (outcomes, events) = try run(translator, cache, Array(repeating: noteOn("/nowhere/note_on"), count: 3))
        #expect(outcomes == [.unknownAddress, .unknownAddress, .unknownAddress])
        #expect(events.isEmpty)
        #expect(cache.misses == 1)
    }

    @Test func rulesSharingAnAddressAreTriedInOrderFromTheCache() throws {
        // Three rules at one address, each taking different arguments: the cache holds two
        // matches, so a third makes the address match its rules per message; both ways agree.
        func rule(_ types: String, _ controller: Double) throws -> OSCMappingRule {
            OSCMappingRule(
                address: try OSCMappingAddress("/fx/{n}"), argumentTypes: Array(types.utf8), output: .port(0),
                kind: .controlChange,
                values: [
                    OSCMappingValue(.capture(0)), OSCMappingValue(.constant(controller)), OSCMappingValue(.argument(0)),
                ])
        }
        let messages = [
            OSCMessage("/fx/3", [.int32(5)]), OSCMessage("/fx/3", [.string("s")]),
            OSCMessage("/fx/3", [.int32(1), .int32(2)]), OSCMessage("/fx/3", [.blob([1])]),
            OSCMessage("/fx/4", [.string("s")]),
        ]
        let two = OSCToMIDITranslator(outputNames: ["thru"], rules: [try rule("i", 1), try rule("s", 2)])
        let (twoOutcomes, twoEvents) = try run(two, OSCAddressCache(), messages)
        #expect(twoOutcomes == [.translated, .malformed, .malformed, .malformed, .malformed])
        #expect(twoEvents == ["0:control_change:2:1:5"])

        let three = OSCToMIDITranslator(
            outputNames: ["thru"], rules: [try rule("i", 1), try rule("ii", 2), try rule("b", 3)])
        let cache = OSCAddressCache()
        let (outcomes, events) = try run(three, cache, messages)
        #expect(outcomes == [.translated, .malformed, .translated, .malformed, .malformed])
        #expect(events == ["0:control_change:2:1:5", "0:control_change:2:2:1"])
    }
}

/// What validating a datagram and translating its message gives: the outcome and events, or
/// the decoder's error.
private enum Result: Equatable {
    case translated(OSCToMIDITranslator.Outcome, [String])
    case invalid(OSCDecodeError)
}

private func describe(_ event: MIDIEvent) -> String {
    "\(event.port):\(event.kind):\(event.channel):\(event.data1):\(event.data2):\(event.value)"
}

/// The usual way: `OSCPacketView`, then the translator through a cache of its own.
private func slowPath(_ translator: OSCToMIDITranslator, _ bytes: [UInt8]) -> Result {
    bytes.withUnsafeBytes { raw -> Result in
        do throws(OSCDecodeError) {
            guard case .message(let message) = try OSCPacketView(raw) else { return .invalid(.empty) }
            var events: [String] = []
            let outcome = translator.translate(message, cache: OSCAddressCache()) { events.append(describe($0)) }
            return .translated(outcome, events)
        } catch {
            return .invalid(error)
        }
    }
}

/// The fast path, with `cache` already knowing the address; nil when it missed.
private func fastPath(_ translator: OSCToMIDITranslator, _ cache: OSCAddressCache, _ bytes: [UInt8]) -> Result? {
    bytes.withUnsafeBytes { raw -> Result? in
        var events: [String] = []
        do throws(OSCDecodeError) {
            guard
                let (message, outcome) = try translator.translate(
                    datagram: raw, cache: cache, into: { events.append(describe($0)) })
            else { return nil }
            #expect(message.address.elementsEqual(try! OSCMessageView(raw).address))
            return .translated(outcome, events)
        } catch {
            return .invalid(error)
        }
    }
}

@Suite struct CachedDatagramTests {
    static let translator = OSCToMIDITranslator(outputNames: ["synth", "thru"])

    /// Valid and broken datagrams at addresses the cache will know, as bytes.
    static func datagrams() throws -> [[UInt8]] {
        var datagrams: [[UInt8]] = []
        let messages = [
            OSCMessage("/*/note_on", [.int32(1), .int32(60), .int32(100)]),
            OSCMessage("/*/note_on", [.int32(0), .int32(60), .int32(300)]),
            OSCMessage("/*/note_on", [.int32(1), .int32(60)]),
            OSCMessage("/*/note_on", [.int32(1), .float32(60.6), .int32(100)]),
            OSCMessage("/*/note_on", [.int32(1), .int32(60), .int32(100), .int32(1)]),
            OSCMessage("/*/note_on", [.int32(1), .string("x"), .int32(100)]),
            OSCMessage("/synth/pitch_bend", [.int32(2), .int32(9000)]),
            OSCMessage("/synth/program_change", [.int32(2)]),
            OSCMessage("/synth/program_change", []),
            OSCMessage("/midi/thru/3/cc", [.int32(7), .int32(64)]),
            OSCMessage("/midi/thru/3/cc", [.int32(7), .double(64)]),
            OSCMessage("/midi/thru/clock", []),
            OSCMessage("/nowhere/note_on", [.int32(1), .int32(60), .int32(100)]),
        ]
        for message in messages {
            let bytes = try message.serialize()
            datagrams.append(bytes)
            // The same address with a broken tail: every error after the address.
            let tags = OSCWriter.padded(message.address.utf8.count + 1)
            var noTags = Array(bytes[0..<tags])
            datagrams.append(noTags)
            noTags.append(contentsOf: [UInt8(ascii: "x"), 0, 0, 0])
            datagrams.append(noTags)
            datagrams.append(bytes + [0, 0, 0, 1])
            datagrams.append(Array(bytes.dropLast(4)))
            datagrams.append(bytes + [0])
            // A non-zero byte in the tag string's padding, where it has some after its NUL.
            let tagsEnd = tags + OSCWriter.padded(message.arguments.count + 2)
            if tagsEnd - 1 > tags + message.arguments.count + 1 {
                var padding = bytes
                padding[tagsEnd - 1] = 1
                datagrams.append(padding)
            }
            var unknownTag = bytes
            if message.arguments.count > 0 { unknownTag[tags + 1] = UInt8(ascii: "Z") }
            datagrams.append(unknownTag)
        }
        return datagrams
    }

    @Test func theFastPathAgreesWithValidatingFirst() throws {
        let datagrams = try Self.datagrams()
        let cache = OSCAddressCache()
        var hits = 0
        for bytes in datagrams {
            let expected = slowPath(Self.translator, bytes)
            if let fast = fastPath(Self.translator, cache, bytes) {
                #expect(fast == expected, "\(bytes)")
                hits += 1
            } else {
                // A miss: the usual way fills the cache, and the next try hits.
                _ = bytes.withUnsafeBytes { raw in
                    (try? OSCMessageView(raw)).map { Self.translator.translate($0, cache: cache) { _ in } }
                }
                if case .translated = expected {
                    #expect(fastPath(Self.translator, cache, bytes) == expected, "\(bytes)")
                    hits += 1
                }
            }
        }
        // Every address became known: all but a few datagrams went the fast way.
        #expect(hits > datagrams.count * 3 / 4)
    }

    @Test func theFastPathKnowsOnlyAddressesTheCacheHolds() throws {
        let cache = OSCAddressCache()
        let note = try OSCMessage("/*/note_on", [.int32(1), .int32(60), .int32(100)]).serialize()
        #expect(fastPath(Self.translator, cache, note) == nil)
        let bundle = try OSCBundle([.message(OSCMessage("/*/note_on", []))]).serialize()
        #expect(fastPath(Self.translator, cache, bundle) == nil)
        #expect(fastPath(Self.translator, cache, []) == nil)
        _ = slowPathFilling(cache, note)
        #expect(
            fastPath(Self.translator, cache, note)
                == .translated(.translated, ["0:note_on:0:60:100:0", "1:note_on:0:60:100:0"]))
        // One byte different in the address or its padding: not the cached key.
        var other = note
        other[2] = UInt8(ascii: "y")
        #expect(fastPath(Self.translator, cache, other) == nil)
        // Another translator (a reload): the cache answers nothing.
        #expect(fastPath(OSCToMIDITranslator(outputNames: ["synth"]), cache, note) == nil)
    }

    private func slowPathFilling(_ cache: OSCAddressCache, _ bytes: [UInt8]) -> OSCToMIDITranslator.Outcome? {
        bytes.withUnsafeBytes { raw in
            (try? OSCMessageView(raw)).map { Self.translator.translate($0, cache: cache) { _ in } }
        }
    }
}
