/// OSC 1.0 address pattern matching: `?`, `*`, `[a-z]`, `[!x]` and `{foo,bar}`, each confined to
/// one part of the address between `/`s.
///
/// Patterns arrive from the network, so the matcher must stay cheap on hostile input: it runs
/// the pattern as a nondeterministic automaton over the address, one pass over the pattern per
/// address byte, so a part costs O(pattern part length × address part length) whatever the
/// wildcards, with no backtracking. It reads UTF-8 bytes in place and allocates nothing for
/// parts up to a few hundred bytes (the state sets live in a temporary, stack-first buffer).
///
/// Malformed patterns — an unterminated `[` or `{` — match nothing. Inside `{}` the
/// alternatives are literal text. Characters compare as bytes, so `?` matches one UTF-8 byte.
package enum OSCAddressPattern {
    /// Whether `pattern` matches the concrete `address`.
    package static func matches(pattern: UnsafeRawBufferPointer, address: UnsafeRawBufferPointer) -> Bool {
        var patternStart = 0
        var addressStart = 0
        while true {
            let patternEnd = partEnd(pattern, from: patternStart)
            let addressEnd = partEnd(address, from: addressStart)
            let patternPart = UnsafeRawBufferPointer(rebasing: pattern[patternStart..<patternEnd])
            let addressPart = UnsafeRawBufferPointer(rebasing: address[addressStart..<addressEnd])
            guard matchPart(patternPart, addressPart) else { return false }
            let patternDone = patternEnd == pattern.count
            let addressDone = addressEnd == address.count
            if patternDone || addressDone { return patternDone && addressDone }
            patternStart = patternEnd + 1
            addressStart = addressEnd + 1
        }
    }

    /// Whether `pattern` matches the concrete `address`, reading both strings' UTF-8 in place.
    package static func matches(pattern: String, address: String) -> Bool {
        var pattern = pattern
        var address = address
        return pattern.withUTF8 { pattern in
            address.withUTF8 { address in
                matches(pattern: UnsafeRawBufferPointer(pattern), address: UnsafeRawBufferPointer(address))
            }
        }
    }

    /// Whether `bytes` contains any pattern character, i.e. is not a plain address that could
    /// be compared byte for byte.
    package static func isPattern(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        while i < bytes.count {
            switch bytes[i] {
            case star, question, openBracket, openBrace: return true
            default: i += 1
            }
        }
        return false
    }

    private static let slash = UInt8(ascii: "/")
    private static let star = UInt8(ascii: "*")
    private static let question = UInt8(ascii: "?")
    private static let openBracket = UInt8(ascii: "[")
    private static let closeBracket = UInt8(ascii: "]")
    private static let openBrace = UInt8(ascii: "{")
    private static let closeBrace = UInt8(ascii: "}")
    private static let comma = UInt8(ascii: ",")
    private static let bang = UInt8(ascii: "!")
    private static let dash = UInt8(ascii: "-")

    private static func partEnd(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        var i = start
        while i < bytes.count, bytes[i] != slash { i += 1 }
        return i
    }

    /// The index of the `]` closing the class opened at `open`, or nil.
    private static func classEnd(_ pattern: UnsafeRawBufferPointer, _ open: Int) -> Int? {
        var i = open + 1
        while i < pattern.count {
            if pattern[i] == closeBracket { return i }
            i += 1
        }
        return nil
    }

    /// Whether `byte` is in the class whose contents (between `[` and `]`) are `set`.
    private static func classContains(_ set: UnsafeRawBufferPointer, _ byte: UInt8) -> Bool {
        var i = 0
        var negated = false
        if let first = set.first, first == bang {
            negated = true
            i = 1
        }
        var found = false
        while i < set.count {
            // A `-` between two characters is a range; at either end it is itself.
            if i + 2 < set.count, set[i + 1] == dash {
                if set[i] <= byte && byte <= set[i + 2] { found = true }
                i += 3
            } else {
                if set[i] == byte { found = true }
                i += 1
            }
        }
        return found != negated
    }

    /// Runs the automaton for one part. A state is a position in the pattern: the start of the
    /// next thing to match there, `pattern.count` being "matched it all".
    private static func matchPart(_ pattern: UnsafeRawBufferPointer, _ address: UnsafeRawBufferPointer) -> Bool {
        // The common parts need no automaton: `*` alone matches any part, and a part without
        // `* ? [ {` matches only itself.
        if pattern.count == 1 && pattern[0] == star { return true }
        if !isPattern(pattern) { return bytesEqual(pattern, address) }
        guard isWellFormed(pattern) else { return false }
        let stateCount = pattern.count + 1
        return withUnsafeTemporaryAllocation(of: Bool.self, capacity: 2 * stateCount) { storage in
            storage.initialize(repeating: false)
            var current = UnsafeMutableBufferPointer(rebasing: storage[0..<stateCount])
            var next = UnsafeMutableBufferPointer(rebasing: storage[stateCount..<2 * stateCount])
            current[0] = true
            addEmptyMoves(pattern, &current)
            var a = 0
            while a < address.count {
                next.update(repeating: false)
                guard step(pattern, current, address[a], into: &next) else { return false }
                addEmptyMoves(pattern, &next)
                swap(&current, &next)
                a += 1
            }
            return current[pattern.count]
        }
    }

    private static func bytesEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        var i = 0
        while i < a.count {
            if a[i] != b[i] { return false }
            i += 1
        }
        return true
    }

    /// Whether every `[` and `{` is closed; checked once so the sweeps below can rely on it (an
    /// open group would otherwise let a match run off its end).
    private static func isWellFormed(_ pattern: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        var inGroup = false
        while i < pattern.count {
            let byte = pattern[i]
            if inGroup {
                if byte == closeBrace { inGroup = false }
            } else if byte == openBrace {
                inGroup = true
            } else if byte == openBracket {
                guard let end = classEnd(pattern, i) else { return false }
                i = end
            }
            i += 1
        }
        return !inGroup
    }

    /// Adds the states reachable without reading a byte: past a `*`, into every alternative of a
    /// `{}` group, and out of a group at the end of an alternative. Every such move goes forward,
    /// so one sweep in pattern order finds them all.
    private static func addEmptyMoves(
        _ pattern: UnsafeRawBufferPointer, _ states: inout UnsafeMutableBufferPointer<Bool>
    ) {
        var q = 0
        var inGroup = false
        var groupEntered = false
        var alternativeEnded = false
        while q < pattern.count {
            let byte = pattern[q]
            if inGroup {
                if byte == comma {
                    if states[q] { alternativeEnded = true }
                    if groupEntered { states[q + 1] = true }
                } else if byte == closeBrace {
                    if states[q] { alternativeEnded = true }
                    if alternativeEnded { states[q + 1] = true }
                    inGroup = false
                }
                q += 1
            } else if byte == openBrace {
                inGroup = true
                groupEntered = states[q]
                alternativeEnded = false
                if groupEntered { states[q + 1] = true }
                q += 1
            } else if byte == star {
                if states[q] { states[q + 1] = true }
                q += 1
            } else if byte == openBracket, let end = classEnd(pattern, q) {
                q = end + 1
            } else {
                q += 1
            }
        }
    }

    /// Moves every state across `byte`; false when no state survives, which settles the part.
    private static func step(
        _ pattern: UnsafeRawBufferPointer, _ states: UnsafeMutableBufferPointer<Bool>, _ byte: UInt8,
        into next: inout UnsafeMutableBufferPointer<Bool>
    ) -> Bool {
        var any = false
        var q = 0
        var inGroup = false
        while q < pattern.count {
            let token = pattern[q]
            if inGroup {
                if token == closeBrace {
                    inGroup = false
                } else if token != comma, states[q], token == byte {
                    next[q + 1] = true
                    any = true
                }
                q += 1
            } else if token == openBrace {
                inGroup = true
                q += 1
            } else if token == star {
                if states[q] {
                    next[q] = true
                    any = true
                }
                q += 1
            } else if token == openBracket, let end = classEnd(pattern, q) {
                let set = UnsafeRawBufferPointer(rebasing: pattern[q + 1..<end])
                if states[q], classContains(set, byte) {
                    next[end + 1] = true
                    any = true
                }
                q = end + 1
            } else {
                if states[q], token == question || token == byte {
                    next[q + 1] = true
                    any = true
                }
                q += 1
            }
        }
        return any
    }
}
