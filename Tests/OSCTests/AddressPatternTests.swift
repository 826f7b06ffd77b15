import OSC
import TestSupport
import Testing

/// A pattern, an address, and whether they match.
struct PatternCase: Sendable, CustomTestStringConvertible {
    let pattern: String
    let address: String
    let matches: Bool
    var testDescription: String { "\(pattern) \(matches ? "matches" : "does not match") \(address)" }

    init(_ pattern: String, _ address: String, _ matches: Bool) {
        self.pattern = pattern
        self.address = address
        self.matches = matches
    }
}

let patternCases: [PatternCase] = [
    PatternCase("/a/b", "/a/b", true),
    PatternCase("/a/b", "/a/c", false),
    PatternCase("/a", "/ab", false),
    PatternCase("/ab", "/a", false),
    PatternCase("/a/b", "/a", false),
    PatternCase("/a", "/a/b", false),
    PatternCase("/a/", "/a/", true),
    PatternCase("/*", "/note_on", true),
    PatternCase("/*", "/", true),
    PatternCase("/*", "/a/b", false),
    PatternCase("/a/*", "/a/b/c", false),
    PatternCase("/*/c", "/anything/c", true),
    PatternCase("/*/*", "/x/y", true),
    PatternCase("/note_*", "/note_on", true),
    PatternCase("/note_*", "/note", false),
    PatternCase("/*a*b", "/xxaxxb", true),
    PatternCase("/*a*b", "/xxbxxa", false),
    PatternCase("/**", "/abc", true),
    PatternCase("/a?c", "/abc", true),
    PatternCase("/a?c", "/ac", false),
    PatternCase("/a?c", "/abbc", false),
    PatternCase("/???", "/abc", true),
    PatternCase("/[a-c]x", "/bx", true),
    PatternCase("/[a-c]x", "/dx", false),
    PatternCase("/[!a-c]x", "/dx", true),
    PatternCase("/[!a-c]x", "/bx", false),
    PatternCase("/[abc-]", "/-", true),
    PatternCase("/[-a]", "/-", true),
    PatternCase("/[!]", "/q", true),
    PatternCase("/[]", "/q", false),
    PatternCase("/ch[0-9][0-9]", "/ch12", true),
    PatternCase("/ch[0-9][0-9]", "/ch1x", false),
    PatternCase("/{foo,bar}", "/bar", true),
    PatternCase("/{foo,bar}", "/baz", false),
    PatternCase("/{foo,bar}", "/foobar", false),
    PatternCase("/{foo,bar}/*", "/foo/x", true),
    PatternCase("/x{,y}", "/x", true),
    PatternCase("/x{,y}", "/xy", true),
    PatternCase("/{}", "/", true),
    PatternCase("/{a,ab}c", "/abc", true),
    PatternCase("/{ab,a}bc", "/abc", true),
    PatternCase("/*{on,off}", "/note_off", true),
    PatternCase("/*{on,off}", "/note_of", false),
    PatternCase("/{note,cc}_*/[0-9]", "/cc_in/7", true),
    PatternCase("/{a*,b}", "/a*", true),
    PatternCase("/{a*,b}", "/ax", false),
    PatternCase("/[abc", "/a", false),
    PatternCase("/{abc", "/abc", false),
    PatternCase("/{a[,b}", "/a[", true),
    PatternCase("/x]}", "/x]}", true),
    PatternCase("/é?", "/éx", true),
    PatternCase("/" + String(repeating: "*", count: 16) + "a", "/" + String(repeating: "b", count: 40), false),
    PatternCase("/" + String(repeating: "*", count: 16) + "a", "/" + String(repeating: "b", count: 40) + "a", true),
    PatternCase("/" + String(repeating: "*a", count: 30) + "b", "/" + String(repeating: "a", count: 100), false),
    PatternCase("/" + String(repeating: "{a,aa}", count: 30) + "b", "/" + String(repeating: "a", count: 45), false),
    PatternCase("/" + String(repeating: "{a,aa}", count: 30), "/" + String(repeating: "a", count: 45), true),
    PatternCase("/" + String(repeating: "?*", count: 50) + "x", "/" + String(repeating: "y", count: 200), false),
]

@Suite("Address patterns")
struct AddressPatternTests {
    @Test(arguments: patternCases)
    func patternMatchesExactlyTheExpectedAddresses(testCase: PatternCase) {
        #expect(OSCAddressPattern.matches(pattern: testCase.pattern, address: testCase.address) == testCase.matches)
    }

    @Test func hostilePatternsFinishQuickly() {
        let star = "/" + String(repeating: "*", count: 4000) + "a"
        let braces = "/" + String(repeating: "{a,b,ab}", count: 500) + "c"
        let address = "/" + String(repeating: "ab", count: 500)
        let elapsed = ContinuousClock().measure {
            #expect(!OSCAddressPattern.matches(pattern: star, address: address))
            #expect(!OSCAddressPattern.matches(pattern: braces, address: address))
        }
        #expect(elapsed < .seconds(2 * sanitizerSlowdown), "took \(elapsed)")
    }

    @Test func isPatternSpotsWildcards() {
        #expect(Array("/a/b*".utf8).withUnsafeBytes(OSCAddressPattern.isPattern))
        #expect(!Array("/a/b".utf8).withUnsafeBytes(OSCAddressPattern.isPattern))
    }
}

/// A plainly backtracking matcher with the documented semantics: exponential, but obviously
/// right, so the automaton can be checked against it on short random inputs.
private func referenceMatch(_ pattern: [UInt8], _ address: [UInt8]) -> Bool {
    let patternParts = pattern.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
    let addressParts = address.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
    guard patternParts.count == addressParts.count else { return false }
    return zip(patternParts, addressParts).allSatisfy { referencePart(Array($0), 0, Array($1), 0) }
}

private func referencePart(_ p: [UInt8], _ pi: Int, _ t: [UInt8], _ ti: Int) -> Bool {
    guard pi < p.count else { return ti == t.count }
    switch p[pi] {
    case UInt8(ascii: "*"):
        return referencePart(p, pi + 1, t, ti) || (ti < t.count && referencePart(p, pi, t, ti + 1))
    case UInt8(ascii: "?"):
        return ti < t.count && referencePart(p, pi + 1, t, ti + 1)
    case UInt8(ascii: "["):
        guard let end = p[(pi + 1)...].firstIndex(of: UInt8(ascii: "]")), ti < t.count else { return false }
        var set = Array(p[(pi + 1)..<end])
        let negated = set.first == UInt8(ascii: "!")
        if negated { set.removeFirst() }
        var found = false
        var i = 0
        while i < set.count {
            if i + 2 < set.count, set[i + 1] == UInt8(ascii: "-") {
                found = found || (set[i]...max(set[i], set[i + 2])).contains(t[ti]) && set[i] <= set[i + 2]
                i += 3
            } else {
                found = found || set[i] == t[ti]
                i += 1
            }
        }
        return found != negated && referencePart(p, end + 1, t, ti + 1)
    case UInt8(ascii: "{"):
        guard let close = p[(pi + 1)...].firstIndex(of: UInt8(ascii: "}")) else { return false }
        let alternatives = p[(pi + 1)..<close].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        return alternatives.contains { alternative in
            t[ti...].starts(with: alternative) && referencePart(p, close + 1, t, ti + alternative.count)
        }
    default:
        return ti < t.count && p[pi] == t[ti] && referencePart(p, pi + 1, t, ti + 1)
    }
}

@Test func matcherAgreesWithABacktrackingReferenceOnRandomPatterns() {
    var random = SplitMix64(seed: 42)
    let patternAlphabet = Array("ab-*?[]!{},/".utf8)
    let addressAlphabet = Array("ab-/".utf8)
    var matched = 0
    for _ in 0..<20_000 {
        let pattern =
            [UInt8(ascii: "/")]
            + (0..<Int(random.next() % 9)).map { _ in
                patternAlphabet[Int(random.next() % UInt64(patternAlphabet.count))]
            }
        let address =
            [UInt8(ascii: "/")]
            + (0..<Int(random.next() % 7)).map { _ in
                addressAlphabet[Int(random.next() % UInt64(addressAlphabet.count))]
            }
        let expected = referenceMatch(pattern, address)
        let actual = pattern.withUnsafeBytes { p in
            address.withUnsafeBytes { a in OSCAddressPattern.matches(pattern: p, address: a) }
        }
        #expect(
            actual == expected,
            "\(String(decoding: pattern, as: UTF8.self)) vs \(String(decoding: address, as: UTF8.self))")
        if expected { matched += 1 }
    }
    #expect(matched > 500)
}
