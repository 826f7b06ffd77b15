import MIDI
import MIDIOSC
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
