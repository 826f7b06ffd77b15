import MIDI
import OSC
import Storage
import TestSupport
import Testing

@testable import MIDIToOSC
@testable import OSCMapping
@testable import OSCToMIDI

/// A control-change rule at `address`, taking `types`, setting controller `controller`.
private func rule(_ address: String, _ types: String? = "f", controller: Double = 1) throws -> OSCMappingRule {
    OSCMappingRule(
        address: try OSCMappingAddress(address), argumentTypes: types.map { Array($0.utf8) }, output: .port(0),
        kind: .controlChange,
        values: [nil, OSCMappingValue(.constant(controller)), OSCMappingValue(.argument(0))])
}

/// Every rule `address` matches, in order, by matching each rule in turn: the reference.
private func scan(_ rules: [OSCMappingRule], _ address: [UInt8]) -> [(Int, TupleArray8<Int32>)] {
    address.withUnsafeBytes { raw in
        var found: [(Int, TupleArray8<Int32>)] = []
        for (r, rule) in rules.enumerated() {
            var captures = TupleArray8<Int32>(repeating: 0)
            if rule.address.match(raw, captures: &captures) { found.append((r, captures)) }
        }
        return found
    }
}

/// Every rule `address` matches, in order, through the index, one lookup after another.
private func lookUp(_ index: OSCMappingIndex, _ address: [UInt8]) -> [(Int, TupleArray8<Int32>)] {
    address.withUnsafeBytes { raw in
        var found: [(Int, TupleArray8<Int32>)] = []
        var after = -1
        while let (r, captures) = index.firstMatch(raw, after: after) {
            found.append((r, captures))
            after = r
        }
        return found
    }
}

private func same(_ a: [(Int, TupleArray8<Int32>)], _ b: [(Int, TupleArray8<Int32>)]) -> Bool {
    guard a.count == b.count else { return false }
    for (x, y) in zip(a, b) {
        guard x.0 == y.0 else { return false }
        for i in 0..<8 where x.1[i] != y.1[i] { return false }
    }
    return true
}

private func rules(_ found: [(Int, TupleArray8<Int32>)]) -> [Int] { found.map(\.0) }

/// Whether `resolution` holds the rules `address` matches as scanning `all` finds them: the
/// first two with their captures, or `.manyRules` past two.
private func resolves(_ resolution: AddressResolution, as all: [OSCMappingRule], _ address: [UInt8]) -> Bool {
    let found = scan(all, address)
    if found.count > 2 { return resolution.action == .manyRules }
    guard Int(resolution.ruleCount) == found.count else { return false }
    guard let first = found.first else { return true }
    guard Int(resolution.firstRule) == first.0, (0..<8).allSatisfy({ resolution.firstCaptures[$0] == first.1[$0] })
    else { return false }
    guard found.count == 2 else { return true }
    return Int(resolution.secondRule) == found[1].0
        && (0..<8).allSatisfy { resolution.secondCaptures[$0] == found[1].1[$0] }
}

/// Translates `message` through the translator's one entry (its address table first) and
/// through the general resolution alone: outcome and events each way.
private func translateBothWays(
    _ translator: OSCToMIDITranslator, _ message: OSCMessage
) throws -> (table: String, general: String) {
    let bytes = try message.serialize()
    return try bytes.withUnsafeBytes { raw in
        let view = try OSCMessageView(raw)
        var table: [String] = []
        var general: [String] = []
        let one = translator.translate(view) {
            table.append("\($0.port):\($0.kind):\($0.channel):\($0.data1):\($0.data2)")
        }
        let two = translator.perform(translator.resolve(view.address), view, 0) {
            general.append("\($0.port):\($0.kind):\($0.channel):\($0.data1):\($0.data2)")
        }
        return ("\(one) \(table)", "\(two) \(general)")
    }
}

@Suite struct MappingIndexTests {
    @Test func aThousandLiteralRulesEachResolveToTheirOwnRule() throws {
        let all = try (0..<1000).map { try rule("/layout/ctl\($0)", controller: Double($0 % 128)) }
        let index = OSCMappingIndex(all)
        for i in [0, 1, 499, 998, 999] {
            #expect(rules(lookUp(index, Array("/layout/ctl\(i)".utf8))) == [i])
        }
        #expect(lookUp(index, Array("/layout/ctl1000".utf8)).isEmpty)
        #expect(lookUp(index, Array("/layout".utf8)).isEmpty)
        #expect(lookUp(index, Array("/layout/ctl1/x".utf8)).isEmpty)
    }

    @Test func theIndexGrowsWithTheRulesParts() throws {
        // Loading is linear: a node and a literal edge per new part (the shared `/layout` once),
        // an edge table at most four slots an edge.
        for count in [10, 100, 1000] {
            let index = OSCMappingIndex(try (0..<count).map { try rule("/layout/ctl\($0)") })
            #expect(index.ruleCount == count)
            #expect(index.nodeCount == count + 2)
            #expect(index.literalEdgeCount == count + 1)
            #expect(index.literalTableCapacity >= 2 * index.literalEdgeCount)
            #expect(index.literalTableCapacity <= 4 * index.literalEdgeCount + 8)
        }
        // Templates share their nodes: one capture edge for a thousand faders.
        let template = OSCMappingIndex(try (0..<1000).map { _ in try rule("/1/fader{n}") })
        #expect(template.nodeCount == 3)
        #expect(template.literalEdgeCount == 1)
    }

    @Test(arguments: [
        // A pattern rule before a literal one that also matches: the pattern wins.
        (["/mix/*", "/mix/vol"], "/mix/vol", [0, 1]),
        (["/mix/{n}", "/mix/7"], "/mix/7", [0, 1]),
        (["/mix/ch{n}", "/mix/ch7"], "/mix/ch7", [0, 1]),
        // A literal rule first: the literal wins, the pattern after it.
        (["/mix/vol", "/mix/*"], "/mix/vol", [0, 1]),
        (["/mix/7", "/mix/{n}", "/mix/*"], "/mix/7", [0, 1, 2]),
        // Overlapping patterns at several depths, found in config order.
        (["/a/b/c", "/*/b/*", "/a/*/c", "/a/b/{n}", "/*/*/*"], "/a/b/c", [0, 1, 2, 4]),
        (["/a/b/c", "/*/b/*", "/a/*/c", "/a/b/{n}", "/*/*/*"], "/a/b/5", [1, 3, 4]),
        (["/x{n}y", "/x{n}", "/{n}y", "/*"], "/x12y", [0, 3]),
        (["/x{n}y", "/x{n}", "/{n}y", "/*"], "/-5y", [2, 3]),
        (["/x/{n}", "/x/{n}/"], "/x/3/", [1]),
        (["/", "/*"], "/", [0, 1]),
    ])
    func firstMatchWinsAcrossLiteralAndPatternRules(addresses: [String], address: String, expected: [Int]) throws {
        let all = try addresses.map { try rule($0) }
        let index = OSCMappingIndex(all)
        let found = lookUp(index, Array(address.utf8))
        #expect(rules(found) == expected)
        #expect(same(found, scan(all, Array(address.utf8))))
        // A resolution keeps the first two; a third makes the address match per message.
        let translator = OSCToMIDITranslator(outputNames: ["synth"], rules: all)
        address.utf8CString.withUnsafeBytes { raw in
            let bytes = UnsafeRawBufferPointer(rebasing: raw[0..<(raw.count - 1)])
            let resolution = translator.resolve(bytes)
            #expect(resolves(resolution, as: all, Array(address.utf8)))
            #expect(resolution.action == (expected.count > 2 ? .manyRules : .rules))
        }
    }

    @Test func capturesComeFromTheMatchingRulesPath() throws {
        let all = try [rule("/t/{a}/x"), rule("/t/{a}/{b}"), rule("/t/*/{b}")]
        let found = lookUp(OSCMappingIndex(all), Array("/t/4/9".utf8))
        #expect(rules(found) == [1, 2])
        #expect(found[0].1[0] == 4 && found[0].1[1] == 9)
        // The third rule's one capture is its first: index 0, the other entries 0.
        #expect(found[1].1[0] == 9 && found[1].1[1] == 0)
    }

    @Test func randomRulesAndAddressesAgreeWithMatchingEveryRule() throws {
        // Parts drawn from a small alphabet so that rules overlap and addresses hit them.
        // `#` stands for a capture.
        let parts = ["a", "b", "*", "#", "x#", "x#y", "#y", "ab", ""]
        let addressParts = ["a", "b", "ab", "x1", "x12y", "7", "-3y", "x", "", "xy", "x-0", "1234567890"]
        var random = SplitMix64(seed: 20)
        for _ in 0..<200 {
            var all: [OSCMappingRule] = []
            for _ in 0..<Int(random.next() % 40) {
                var text = ""
                var captures = 0
                for _ in 0..<(1 + Int(random.next() % 4)) {
                    let part = parts[Int(random.next() % UInt64(parts.count))]
                    if part.contains("#") { captures += 1 }
                    text += "/" + part.map { $0 == "#" ? "{c\(captures)}" : String($0) }.joined()
                }
                if let address = try? OSCMappingAddress(text) {
                    all.append(
                        OSCMappingRule(
                            address: address, argumentTypes: nil, output: .port(0), kind: .programChange,
                            values: [nil, OSCMappingValue(.constant(1))]))
                }
            }
            let index = OSCMappingIndex(all)
            for _ in 0..<50 {
                let address = (0..<(1 + Int(random.next() % 4))).map { _ in
                    "/" + addressParts[Int(random.next() % UInt64(addressParts.count))]
                }.joined()
                let bytes = Array(address.utf8)
                #expect(same(lookUp(index, bytes), scan(all, bytes)), "\(all.map(\.address)) at \(address)")
            }
        }
    }

    @Test func aThousandRulesAtOneAddressAreTriedInOrderPerMessage() throws {
        // Only the last takes an `s`: every rule before it is matched and refused per message.
        var all = try (0..<999).map { try rule("/one", "i", controller: Double($0 % 128)) }
        all.append(try rule("/one", "s", controller: 9))
        all[500] = try rule("/one", "ii", controller: 5)
        let translator = OSCToMIDITranslator(outputNames: ["synth"], rules: all)
        for message in [
            OSCMessage("/one", [.int32(3)]), OSCMessage("/one", [.int32(3), .int32(4)]),
            OSCMessage("/one", [.string("x")]), OSCMessage("/one", [.blob([1])]),
        ] {
            let (table, general) = try translateBothWays(translator, message)
            #expect(table == general)
        }
        let (ii, _) = try translateBothWays(translator, OSCMessage("/one", [.int32(3), .int32(4)]))
        #expect(ii == "translated [\"0:control_change:0:5:3\"]")
        let (blob, _) = try translateBothWays(translator, OSCMessage("/one", [.blob([1])]))
        #expect(blob == "malformed []")
    }

    @Test func translatingThroughTheIndexGivesWhatScanningGives() throws {
        let all =
            try [
                rule("/1/fader{n}"), rule("/1/fader9", "i", controller: 9), rule("/1/*", "ff"), rule("/2/push{n}", nil),
                rule("/2/push3", "f", controller: 33), rule("/layout/ctl{n}"),
            ] + (0..<300).map { try rule("/layout/ctl\($0)", "i", controller: Double($0 % 128)) }
        let translator = OSCToMIDITranslator(outputNames: ["synth", "thru"], rules: all)
        let addresses =
            [
                "/1/fader1", "/1/fader9", "/1/xy", "/2/push3", "/2/push30", "/2/push", "/synth/note_on",
                "/midi/thru/1/cc",
            ]
            + (0..<320).map { "/layout/ctl\($0)" }
        let argumentLists: [[OSCArgument]] = [
            [.float32(0.5)], [.int32(7)], [.float32(1), .float32(0)], [.int32(1), .int32(2), .int32(3)], [],
        ]
        for address in addresses {
            address.utf8CString.withUnsafeBytes { raw in
                let bytes = UnsafeRawBufferPointer(rebasing: raw[0..<(raw.count - 1)])
                let resolution = translator.resolve(bytes)
                if resolution.ruleCount > 0 || resolution.action == .manyRules {
                    #expect(resolves(resolution, as: all, Array(address.utf8)), "\(address)")
                } else {
                    #expect(scan(all, Array(address.utf8)).isEmpty, "\(address)")
                }
            }
            for arguments in argumentLists {
                let (table, general) = try translateBothWays(translator, OSCMessage(address, arguments))
                #expect(table == general, "\(address) \(arguments)")
            }
        }
    }
}

@Suite struct AddressTableTests {
    @Test func theDefaultConfigsAddressesAreAllInTheTable() throws {
        let translator = OSCToMIDITranslator(outputNames: ["Synth A", "thru"])
        // Per output: 16 channels x 10 channel types and 11 port-wide types (default), 14
        // commands (osmid); the 14 osmid commands to every port (`/*/note_on`, Sonic Pi's
        // default); and TouchOSC's two.
        #expect(translator.addressTable.count == 2 * (16 * 10 + 11 + 14) + 14 + 2)
        for address in [
            "/midi/synth_a/16/nrpn", "/thru/program_change", "/midi", "/sysex", "/midi/thru/clock", "/*/note_on",
        ] {
            #expect(
                address.utf8CString.withUnsafeBytes { raw in
                    translator.addressTable.lookup(UnsafeRawBufferPointer(rebasing: raw[0..<(raw.count - 1)])) != nil
                }, "\(address)")
        }
        // Not literal as sent, or not accepted: the general way.
        for address in [
            "/midi/Synth A/1/cc", "/midi/synth_a/01/cc", "/midi/*/1/cc", "/midi/synth_a/17/cc", "/x", "/{thru}/note_on",
        ] {
            #expect(
                address.utf8CString.withUnsafeBytes { raw in
                    translator.addressTable.lookup(UnsafeRawBufferPointer(rebasing: raw[0..<(raw.count - 1)])) == nil
                }, "\(address)")
        }
        // Every port's note, from the table as from the matcher: to both outputs.
        let (table, general) = try translateBothWays(
            translator, OSCMessage("/*/note_on", [.int32(1), .int32(60), .int32(100)]))
        #expect(table == general)
        #expect(table == "translated [\"0:note_on:0:60:100\", \"1:note_on:0:60:100\"]")
    }

    @Test func aRulesCapturesRangeOverTheFieldTheySet() throws {
        let channel = OSCMappingRule(
            address: try OSCMappingAddress("/ch{c}/cc{n}"), argumentTypes: nil, output: .port(0), kind: .controlChange,
            values: [OSCMappingValue(.capture(0)), OSCMappingValue(.capture(1)), OSCMappingValue(.argument(0))])
        #expect(OSCToMIDITranslator.literalAddresses(of: channel)?.count == 16 * 128)
        let scaled = OSCMappingRule(
            address: try OSCMappingAddress("/pad{n}"), argumentTypes: nil, output: .port(0), kind: .noteOn,
            values: [
                nil, OSCMappingValue(.capture(0), scale: OSCLinearScale(input: (1, 16), output: (36, 51))),
                OSCMappingValue(.argument(0)),
            ])
        #expect(
            OSCToMIDITranslator.literalAddresses(of: scaled)?.map { String(decoding: $0, as: UTF8.self) }
                == (1...16).map { "/pad\($0)" })
        // A `*` or too many capture values: left to the general resolution.
        #expect(OSCToMIDITranslator.literalAddresses(of: try rule("/mix/*/level")) == nil)
        let wide = OSCMappingRule(
            address: try OSCMappingAddress("/nrpn/{p}/{v}"), argumentTypes: nil, output: .port(0), kind: .nrpn,
            values: [nil, OSCMappingValue(.capture(0)), OSCMappingValue(.capture(1))])
        #expect(OSCToMIDITranslator.literalAddresses(of: wide) == nil)
    }

    @Test func rulesPastTheBoundResolveTheGeneralWayWithTheSameOutcome() throws {
        // 20 rules of 4,096 addresses each: the table holds what fits, the rest are matched.
        let all = try (0..<20).map { r in
            OSCMappingRule(
                address: try OSCMappingAddress("/r\(r)/{c}/{n}"), argumentTypes: nil, output: .port(0),
                kind: .controlChange,
                values: [
                    OSCMappingValue(.capture(0), scale: OSCLinearScale(input: (0, 31), output: (1, 16))),
                    OSCMappingValue(.capture(1)), OSCMappingValue(.argument(0)),
                ])
        }
        let translator = OSCToMIDITranslator(outputNames: ["synth"], rules: all)
        #expect(translator.addressTable.count <= OSCAddressTable.maximumCount)
        for r in [0, 10, 19] {
            let (table, general) = try translateBothWays(translator, OSCMessage("/r\(r)/31/127", [.int32(5)]))
            #expect(table == general)
            #expect(table == "translated [\"0:control_change:15:127:5\"]")
        }
        print("address table: \(translator.addressTable.count) addresses, \(translator.addressTable.byteCount) bytes")
    }

    @Test func aThousandRulesOverAThousandAddressesAreInTheTable() throws {
        let all = try (0..<1000).map { try rule("/layout/ctl\($0)") }
        let translator = OSCToMIDITranslator(outputNames: ["synth"], rules: all)
        #expect(translator.addressTable.count == 1000 + 16 * 10 + 11 + 14 + 14 + 2)
        let defaultTable = OSCToMIDITranslator(outputNames: ["synth"]).addressTable
        print(
            "address table: default config, one output: \(defaultTable.count) addresses, \(defaultTable.byteCount) bytes;"
                + " with 1000 rules: \(translator.addressTable.count), \(translator.addressTable.byteCount) bytes")
        for i in [0, 1, 500, 999] {
            let (table, general) = try translateBothWays(translator, OSCMessage("/layout/ctl\(i)", [.float32(0.5)]))
            #expect(table == general)
            #expect(table.hasPrefix("translated"))
        }
    }
}
