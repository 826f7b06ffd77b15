import OSCMapping
import Storage

/// The mapping rules' addresses compiled at load into a trie over address parts, so finding the
/// rules an address matches costs a walk down its parts, not a match against every rule.
///
/// Each node is reached by a path of parts: a literal part is an edge found in one hash table
/// keyed by the node and the part's bytes; `*` is the node's one wildcard edge; a capture part
/// (`fader{n}`) is one of the node's capture edges, each checked for its prefix, digits and
/// suffix. A rule ends at the node its last part leads to. A lookup follows every edge the
/// address's next part can take and keeps the lowest-numbered rules it finds, so the rules
/// come back in config order (first match wins, whichever of a literal or a pattern rule comes
/// first); a branch whose lowest rule cannot improve on what is found already is not entered.
///
/// Built once per translator (linear in the rules' parts), read-only after: every lookup is
/// allocation-free, and the memory is plain buffers (no reference counting on the way down).
final class OSCMappingIndex: @unchecked Sendable {
    // @unchecked Sendable: immutable once built.

    /// The most rules one lookup returns (a resolution keeps two and needs to know of a third).
    static let maximumMatches = 3

    /// Up to ``maximumMatches`` rules an address matches, lowest index first, with the numbers
    /// each captured.
    struct Matches {
        private(set) var count = 0
        var rules = TupleArray3<Int32>(repeating: 0)
        var captures = TupleArray3<TupleArray8<Int32>>(repeating: TupleArray8(repeating: 0))

        /// Rule `i` (below ``count``): its index in the translator's rules.
        func rule(_ i: Int) -> Int { Int(rules[i]) }
        /// What rule `i` captured, at the rule's capture indices (0 elsewhere).
        func captures(_ i: Int) -> TupleArray8<Int32> { captures[i] }

        /// Keeps `rule` if it is among the `limit` lowest seen.
        @inline(__always)
        mutating func offer(_ rule: Int32, _ found: TupleArray8<Int32>, limit: Int) {
            var at = count
            while at > 0 && rules[at - 1] > rule { at -= 1 }
            guard at < limit else { return }
            var i = min(count, limit - 1)
            while i > at {
                rules[i] = rules[i - 1]
                captures[i] = captures[i - 1]
                i -= 1
            }
            rules[at] = rule
            captures[at] = found
            if count < limit { count += 1 }
        }
    }

    private struct Node {
        /// The rules ending here, ascending, in ``terminals``.
        var terminalStart: Int32 = 0
        var terminalCount: Int32 = 0
        /// The `*` edge's node, or -1.
        var anyChild: Int32 = -1
        /// This node's capture edges in ``captureEdges``.
        var captureStart: Int32 = 0
        var captureCount: Int32 = 0
        /// The lowest rule ending here or below.
        var lowestRule: Int32 = .max
    }

    private struct CaptureEdge {
        var prefixStart: Int32
        var prefixCount: Int32
        var suffixStart: Int32
        var suffixCount: Int32
        var captureIndex: Int32
        var child: Int32
    }

    private struct LiteralEdge {
        /// 0: an empty slot.
        var hash: UInt64 = 0
        var parent: Int32 = 0
        var bytesStart: Int32 = 0
        var bytesCount: Int32 = 0
        var child: Int32 = 0
    }

    /// How many rules were indexed.
    let ruleCount: Int
    /// Trie nodes (the root is node 0) and literal edges: what the rules' parts compiled into,
    /// at most one node and one edge per part of every rule.
    let nodeCount: Int
    let literalEdgeCount: Int
    /// Slots in the literal edge table (a power of two, at least twice the edges).
    let literalTableCapacity: Int

    private let nodes: FixedBuffer<Node>
    private let terminals: FixedBuffer<Int32>
    private let captureEdges: FixedBuffer<CaptureEdge>
    private let literalTable: FixedBuffer<LiteralEdge>
    private let byteBuffer: FixedBuffer<UInt8>
    private var bytes: UnsafeMutablePointer<UInt8> { byteBuffer.baseAddress }

    /// Compiles the addresses of `rules` (rule `i` is `rules[i]`).
    package init(_ rules: [OSCMappingRule]) {
        precondition(rules.count < Int(Int32.max), "OSCMappingIndex: too many rules")
        // Built with ordinary collections, then copied into flat buffers.
        struct Building {
            var terminals: [Int32] = []
            var any: Int32 = -1
            var captures: [(prefix: [UInt8], suffix: [UInt8], index: Int32, child: Int32)] = []
        }
        struct EdgeKey: Hashable {
            var parent: Int32
            var bytes: [UInt8]
        }
        var building = [Building()]
        var literals: [EdgeKey: Int32] = [:]
        var literalOrder: [EdgeKey] = []
        func newNode() -> Int32 {
            building.append(Building())
            return Int32(building.count - 1)
        }
        var r = 0
        while r < rules.count {
            var node: Int32 = 0
            for part in rules[r].address.parts {
                switch part {
                case .literal(let text):
                    let key = EdgeKey(parent: node, bytes: text)
                    if let child = literals[key] {
                        node = child
                    } else {
                        let child = newNode()
                        literals[key] = child
                        literalOrder.append(key)
                        node = child
                    }
                case .any:
                    if building[Int(node)].any < 0 { building[Int(node)].any = newNode() }
                    node = building[Int(node)].any
                case .capture(let prefix, let index, let suffix):
                    if let edge = building[Int(node)].captures.first(where: {
                        $0.prefix == prefix && $0.suffix == suffix && $0.index == Int32(index)
                    }) {
                        node = edge.child
                    } else {
                        let child = newNode()
                        building[Int(node)].captures.append((prefix, suffix, Int32(index), child))
                        node = child
                    }
                }
            }
            building[Int(node)].terminals.append(Int32(r))
            r += 1
        }

        ruleCount = rules.count
        nodeCount = building.count
        literalEdgeCount = literalOrder.count
        var tableSlots = 8
        while tableSlots < literalOrder.count * 2 { tableSlots <<= 1 }
        literalTableCapacity = tableSlots

        let terminalTotal = building.reduce(0) { $0 + $1.terminals.count }
        let captureTotal = building.reduce(0) { $0 + $1.captures.count }
        let byteTotal =
            literalOrder.reduce(0) { $0 + $1.bytes.count }
            + building.reduce(0) { $0 + $1.captures.reduce(0) { $0 + $1.prefix.count + $1.suffix.count } }
        nodes = FixedBuffer(repeating: Node(), count: max(building.count, 1))
        terminals = FixedBuffer(uninitializedCount: terminalTotal)
        captureEdges = FixedBuffer(uninitializedCount: captureTotal)
        literalTable = FixedBuffer(repeating: LiteralEdge(), count: tableSlots)
        byteBuffer = FixedBuffer(uninitializedCount: byteTotal)

        var byteCount = 0
        func store(_ text: [UInt8]) -> Int32 {
            let start = byteCount
            var i = 0
            while i < text.count {
                byteBuffer[start + i] = text[i]
                i += 1
            }
            byteCount += text.count
            return Int32(start)
        }
        var terminalCount = 0
        var captureCount = 0
        var n = 0
        while n < building.count {
            let source = building[n]
            var node = Node()
            node.terminalStart = Int32(terminalCount)
            node.terminalCount = Int32(source.terminals.count)
            // Rules were added in order, so each node's list is ascending already.
            for rule in source.terminals {
                terminals[terminalCount] = rule
                terminalCount += 1
            }
            node.lowestRule = source.terminals.first ?? .max
            node.anyChild = source.any
            node.captureStart = Int32(captureCount)
            node.captureCount = Int32(source.captures.count)
            for edge in source.captures {
                let prefixStart = store(edge.prefix)
                let suffixStart = store(edge.suffix)
                captureEdges[captureCount] = CaptureEdge(
                    prefixStart: prefixStart, prefixCount: Int32(edge.prefix.count), suffixStart: suffixStart,
                    suffixCount: Int32(edge.suffix.count), captureIndex: edge.index, child: edge.child)
                captureCount += 1
            }
            nodes[n] = node
            n += 1
        }
        for key in literalOrder {
            let start = store(key.bytes)
            let hash = Self.hash(
                parent: key.parent, UnsafeRawBufferPointer(start: bytes + Int(start), count: key.bytes.count))
            var slot = Int(truncatingIfNeeded: hash) & (tableSlots - 1)
            while literalTable[slot].hash != 0 { slot = (slot + 1) & (tableSlots - 1) }
            literalTable[slot] = LiteralEdge(
                hash: hash, parent: key.parent, bytesStart: start, bytesCount: Int32(key.bytes.count),
                child: literals[key]!)
        }
        // Children always have higher numbers than their parents: one pass from the leaves up
        // carries each subtree's lowest rule to its root.
        var parents = [Int32](repeating: -1, count: building.count)
        for key in literalOrder { parents[Int(literals[key]!)] = key.parent }
        n = 0
        while n < building.count {
            if building[n].any >= 0 { parents[Int(building[n].any)] = Int32(n) }
            for edge in building[n].captures { parents[Int(edge.child)] = Int32(n) }
            n += 1
        }
        n = building.count - 1
        while n > 0 {
            let parent = Int(parents[n])
            nodes[parent].lowestRule = min(nodes[parent].lowestRule, nodes[n].lowestRule)
            n -= 1
        }
    }

    /// The (at most `limit`, at most ``maximumMatches``) lowest-numbered rules above `after`
    /// whose address `address` matches, as ``OSCMappingAddress/match(_:captures:)`` decides each.
    func matches(_ address: UnsafeRawBufferPointer, after: Int = -1, limit: Int = maximumMatches) -> Matches {
        var found = Matches()
        guard ruleCount > 0, address.first == UInt8(ascii: "/"), let base = address.baseAddress else { return found }
        var captures = TupleArray8<Int32>(repeating: 0)
        search(
            0, base, address.count, 1, &captures, &found, after: Int32(clamping: after),
            limit: min(max(limit, 1), Self.maximumMatches))
        return found
    }

    /// The lowest-numbered rule above `after` that `address` matches, and its captures.
    @inline(__always)
    func firstMatch(_ address: UnsafeRawBufferPointer, after: Int = -1) -> (
        rule: Int, captures: TupleArray8<Int32>
    )? {
        let found = matches(address, after: after, limit: 1)
        return found.count > 0 ? (found.rule(0), found.captures(0)) : nil
    }

    /// Walks from `node` with the part that starts at `start` (past the end: no parts left).
    private func search(
        _ node: Int, _ address: UnsafeRawPointer, _ count: Int, _ start: Int, _ captures: inout TupleArray8<Int32>,
        _ found: inout Matches, after: Int32, limit: Int
    ) {
        let here = nodes[node]
        // Nothing below can displace what is found already.
        if found.count == limit, here.lowestRule > found.rules[limit - 1] { return }
        if start == count + 1 {
            // Every part used: the rules ending here match (their numbers ascend).
            let list = terminals.baseAddress + Int(here.terminalStart)
            // The first above `after`, by bisection (rules sharing an address may be many).
            var low = 0
            var high = Int(here.terminalCount)
            while low < high {
                let middle = (low + high) >> 1
                if list[middle] > after { high = middle } else { low = middle + 1 }
            }
            while low < Int(here.terminalCount) {
                let rule = list[low]
                if found.count == limit, rule > found.rules[limit - 1] { break }
                found.offer(rule, captures, limit: limit)
                low += 1
            }
            return
        }
        guard start <= count else { return }
        var end = start
        while end < count, address.load(fromByteOffset: end, as: UInt8.self) != UInt8(ascii: "/") { end += 1 }
        let part = UnsafeRawBufferPointer(start: address + start, count: end - start)
        if let child = literalChild(node, part) {
            search(child, address, count, end + 1, &captures, &found, after: after, limit: limit)
        }
        if here.anyChild >= 0 {
            search(Int(here.anyChild), address, count, end + 1, &captures, &found, after: after, limit: limit)
        }
        var e = 0
        while e < Int(here.captureCount) {
            let edge = captureEdges[Int(here.captureStart) + e]
            if let number = capture(part, edge) {
                let index = Int(edge.captureIndex)
                let saved = captures[index]
                captures[index] = number
                search(Int(edge.child), address, count, end + 1, &captures, &found, after: after, limit: limit)
                captures[index] = saved
            }
            e += 1
        }
    }

    @inline(__always)
    private func literalChild(_ parent: Int, _ part: UnsafeRawBufferPointer) -> Int? {
        let hash = Self.hash(parent: Int32(parent), part)
        let mask = literalTableCapacity - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let edge = literalTable[slot]
            if edge.hash == 0 { return nil }
            if edge.hash == hash, Int(edge.parent) == parent, Int(edge.bytesCount) == part.count,
                Self.equal(part, bytes + Int(edge.bytesStart))
            {
                return Int(edge.child)
            }
            slot = (slot + 1) & mask
        }
    }

    /// The number between the edge's prefix and suffix, as ``OSCMappingAddress`` reads a capture.
    private func capture(_ part: UnsafeRawBufferPointer, _ edge: CaptureEdge) -> Int32? {
        OSCMappingAddress.capturedNumber(
            in: part,
            prefix: UnsafeRawBufferPointer(start: bytes + Int(edge.prefixStart), count: Int(edge.prefixCount)),
            suffix: UnsafeRawBufferPointer(start: bytes + Int(edge.suffixStart), count: Int(edge.suffixCount)))
    }

    @inline(__always)
    private static func equal(_ part: UnsafeRawBufferPointer, _ bytes: UnsafePointer<UInt8>) -> Bool {
        var i = 0
        while i < part.count {
            if part[i] != bytes[i] { return false }
            i += 1
        }
        return true
    }

    /// A hash of a literal edge, never 0 (an empty slot).
    @inline(__always)
    private static func hash(parent: Int32, _ part: UnsafeRawBufferPointer) -> UInt64 {
        var hash = (0x9E37_79B9_7F4A_7C15 ^ UInt64(UInt32(bitPattern: parent))) &* 0xFF51_AFD7_ED55_8CCD
        var i = 0
        while i < part.count {
            hash = (hash ^ UInt64(part[i])) &* 0x0000_0100_0000_01B3
            i += 1
        }
        hash ^= hash >> 29
        return (hash &* 0xC4CE_B9FE_1A85_EC53 ^ hash >> 32) | 1
    }
}
