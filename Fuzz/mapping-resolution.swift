@testable import MIDI
@testable import OSC
// libFuzzer target: the mapping rules' index (OSCMappingIndex) against matching every rule in
// turn, on arbitrary rules and addresses.
//
// The input is read as a program: up to 24 rules (each part `*`, a capture with a short prefix
// and suffix, a word from a small alphabet, or raw input bytes; rules OSCMappingAddress refuses
// are skipped), then up to 16 addresses (parts from an alphabet that hits the rules, or raw
// bytes). For each address: every rule the index finds, in order, with its captures, must be
// what a scan of all the rules finds; the translator's resolution must hold the scan's first two
// rules (or say there are many); and a message at the address must translate to the same outcome
// and events through the translator's one entry (its address table, made at load from the rules'
// literal addresses, first) as through the general resolution alone.
@testable import OSCMapping
@testable import OSCToMIDI
@testable import Storage

private struct Reader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func raw(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }
}

private let words: [[UInt8]] = ["a", "b", "ab", "x", "mix", ""].map { Array($0.utf8) }
private let affixes: [[UInt8]] = ["", "x", "y", "ab"].map { Array($0.utf8) }
private let addressWords: [[UInt8]] = [
    "a", "b", "ab", "x", "mix", "", "7", "-3", "x12", "x-0y", "12y", "ab1", "xy",
    "1234567890", "-", "x1ab",
].map { Array($0.utf8) }
private let typeLists: [[UInt8]?] = [nil, Array("f".utf8), Array("i".utf8), Array("ii".utf8), Array("s".utf8)]

private func describe(_ event: MIDIEvent) -> String {
    "\(event.port):\(event.kind):\(event.channel):\(event.data1):\(event.data2)"
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var reader = Reader(bytes: UnsafeRawBufferPointer(start: data, count: size))
    var rules: [OSCMappingRule] = []
    let ruleCount = Int(reader.byte() % 25)
    for _ in 0..<ruleCount {
        var text: [UInt8] = []
        var captures = 0
        for _ in 0..<(1 + Int(reader.byte() % 4)) {
            text.append(UInt8(ascii: "/"))
            let choice = reader.byte()
            switch choice % 8 {
            case 0: text.append(UInt8(ascii: "*"))
            case 1, 2:
                text += affixes[Int(reader.byte() % 4)]
                text += Array("{c\(captures)}".utf8)
                captures += 1
                text += affixes[Int(reader.byte() % 4)]
            case 3: text += reader.raw(Int(reader.byte() % 4))
            default: text += words[Int(choice >> 3) % words.count]
            }
        }
        guard let address = try? OSCMappingAddress(String(decoding: text, as: UTF8.self)) else { continue }
        let control = reader.byte()
        rules.append(
            OSCMappingRule(
                address: address, argumentTypes: typeLists[Int(control % 5)], output: .port(0), kind: .controlChange,
                values: [
                    nil,
                    control & 0x80 != 0
                        ? OSCMappingValue(.capture(Int(control >> 4) & 7)) : OSCMappingValue(.constant(7)),
                    OSCMappingValue(.argument(0)),
                ]))
    }
    let index = OSCMappingIndex(rules)
    let translator = OSCToMIDITranslator(outputNames: ["synth"], rules: rules)

    for _ in 0..<Int(reader.byte() % 17) {
        var address: [UInt8] = []
        for _ in 0..<(1 + Int(reader.byte() % 5)) {
            address.append(UInt8(ascii: "/"))
            let choice = reader.byte()
            if choice % 5 == 0 {
                address += reader.raw(Int(reader.byte() % 4))
            } else {
                address += addressWords[Int(choice >> 3) % addressWords.count]
            }
        }
        if reader.byte() % 16 == 0 { address.removeFirst() }
        check(address, rules, index, translator)
    }
    return 0
}

private func check(
    _ address: [UInt8], _ rules: [OSCMappingRule], _ index: OSCMappingIndex, _ translator: OSCToMIDITranslator
) {
    address.withUnsafeBytes { raw in
        // Every match, in order, both ways.
        var expected: [(Int, TupleArray8<Int32>)] = []
        for (r, rule) in rules.enumerated() {
            var captures = TupleArray8<Int32>(repeating: 0)
            if rule.address.match(raw, captures: &captures) { expected.append((r, captures)) }
        }
        var after = -1
        var found = 0
        while let (r, captures) = index.firstMatch(raw, after: after) {
            guard found < expected.count, expected[found].0 == r else {
                fatalError("index found rule \(r) at \(address) after \(after); scanning finds \(expected.map(\.0))")
            }
            for i in 0..<8 where captures[i] != expected[found].1[i] {
                fatalError(
                    "rule \(r) at \(address): capture \(i) is \(captures[i]), scanning gives \(expected[found].1[i])")
            }
            found += 1
            after = r
        }
        guard found == expected.count else {
            fatalError("index found \(found) rules at \(address), scanning \(expected.count)")
        }
        let three = index.matches(raw)
        guard three.count == min(expected.count, 3) else { fatalError("matches() found \(three.count) at \(address)") }
        for i in 0..<three.count where three.rule(i) != expected[i].0 {
            fatalError("matches() disagrees at \(address)")
        }

        // The translator's resolution holds the scan's first two rules, or says there are many.
        let resolution = translator.resolve(raw)
        switch expected.count {
        case 0:
            guard resolution.action != .rules, resolution.action != .manyRules else {
                fatalError("resolution at \(address) has rules, scanning finds none")
            }
        case 1, 2:
            guard resolution.action == .rules, Int(resolution.ruleCount) == expected.count,
                Int(resolution.firstRule) == expected[0].0,
                expected.count == 1 || Int(resolution.secondRule) == expected[1].0
            else { fatalError("resolution at \(address) differs from scanning's \(expected.map(\.0))") }
            for i in 0..<8 where resolution.firstCaptures[i] != expected[0].1[i] {
                fatalError("resolution at \(address): first rule's capture \(i) differs from scanning's")
            }
        default:
            guard resolution.action == .manyRules else { fatalError("resolution at \(address) is not many rules") }
        }
    }

    // A message at the address, through the table and the general way.
    guard !address.contains(0), let text = String(validating: address, as: UTF8.self) else { return }
    for arguments: [OSCArgument] in [[.float32(0.5)], [.int32(3), .int32(200)], [.string("s")]] {
        guard let bytes = try? OSCMessage(text, arguments).serialize() else { return }
        bytes.withUnsafeBytes { raw in
            guard let view = try? OSCMessageView(raw) else { return }
            var table: [String] = []
            var general: [String] = []
            let one = translator.translate(view) { table.append(describe($0)) }
            let two = translator.perform(translator.resolve(view.address), view, 0) { general.append(describe($0)) }
            guard one == two, table == general else {
                fatalError("\(text) \(arguments): \(one) \(table) through the table, \(two) \(general) the general way")
            }
        }
    }
}
