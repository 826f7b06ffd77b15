import OSCMapping

/// The named mapping sets of the top-level `mappings` key, which `osc.mappings` and a
/// destination's `mappings` use by name, so that one set describes a layout both ways.
package struct MappingSets {
    var sets: [String: [ParsedMapping]] = [:]
}

/// A mapping rule as read, with what its users need to report a problem with it at its own key
/// path: a rule in a shared set is checked only where it is used.
package struct ParsedMapping {
    var rule: OSCMappingRule
    var node: ConfigNode
    /// No `output` key (only the OSC input needs one, and only with several outputs).
    var outputMissing: Bool
}

/// What a destination with mappings does with an event that no mapping matches.
package enum UnmatchedEvents: String, Sendable, Equatable, CaseIterable {
    /// Sent as the destination's scheme (`scheme`, `messages`) sends it.
    case scheme
    /// Not sent.
    case drop
}

extension ConfigParser {
    /// Reads the top-level `mappings`: `{ name: [rule, ...], ... }`.
    package static func mappingSets(_ node: ConfigNode?, outputNames: [String]) throws(ConfigError) -> MappingSets {
        var result = MappingSets()
        guard let node else { return result }
        guard case .object(let members) = node.value else {
            throw node.expected("an object of named mapping lists, e.g. { touchosc: [{ address, args, type, ... }] }")
        }
        for name in members.keys.sorted() {
            let child = ConfigNode(members[name]!, path: ConfigNode.join(node.path, name))
            var rules: [ParsedMapping] = []
            for element in try child.array() {
                rules.append(try parsedMapping(element, outputNames: outputNames))
            }
            result.sets[name] = rules
        }
        return result
    }

    /// A list of mappings where they are used: a set's name, or an array of rules and set names.
    package static func mappingList(_ node: ConfigNode, sets: MappingSets, outputNames: [String]) throws(ConfigError)
        -> [ParsedMapping]
    {
        func named(_ element: ConfigNode) throws(ConfigError) -> [ParsedMapping] {
            let name = try element.string()
            guard let set = sets.sets[name] else {
                let known =
                    sets.sets.isEmpty
                    ? "define it in the top-level mappings: { \(name): [ ... ] }"
                    : "the top-level mappings are " + sets.sets.keys.sorted().map { "'\($0)'" }.joined(separator: ", ")
                throw element.error("no mapping set named '\(name)'; \(known)")
            }
            return set
        }
        if case .string = node.value { return try named(node) }
        guard case .array = node.value else {
            throw node.expected("a list of mappings, or the name of a set in the top-level mappings")
        }
        var result: [ParsedMapping] = []
        for element in try node.array() {
            if case .string = element.value {
                result += try named(element)
            } else {
                result.append(try parsedMapping(element, outputNames: outputNames))
            }
        }
        return result
    }

    private static func parsedMapping(_ node: ConfigNode, outputNames: [String]) throws(ConfigError) -> ParsedMapping {
        let rule = try mapping(node, outputNames: outputNames, outputRequired: false)
        var outputMissing = true
        if case .object(let members) = node.value, members["output"] != nil { outputMissing = false }
        return ParsedMapping(rule: rule, node: node, outputMissing: outputMissing)
    }

    /// A destination's `mappings` and `unmatched`: the rules (each checked to work MIDI -> OSC)
    /// and what becomes of the events they do not match.
    package static func destinationMappings(_ object: ConfigObject, _ context: Context) throws(ConfigError)
        -> (mappings: [OSCMappingRule], unmatched: UnmatchedEvents)
    {
        let unmatchedNode = object["unmatched"]
        guard let node = object["mappings"] else {
            if let unmatchedNode { throw unmatchedNode.error("only a destination with mappings has unmatched events") }
            return ([], .scheme)
        }
        var rules: [OSCMappingRule] = []
        for parsed in try mappingList(node, sets: context.mappingSets, outputNames: context.outputNames) {
            do {
                try parsed.rule.checkSendable()
            } catch {
                let usedBy = parsed.node.path.hasPrefix(node.path) ? "" : " (used by \(node.path))"
                throw ConfigError(
                    path: ConfigNode.join(parsed.node.path, error.key), message: error.description + usedBy)
            }
            rules.append(parsed.rule)
        }
        let namesScheme = object["scheme"] ?? object["messages"]
        var unmatched: UnmatchedEvents = namesScheme == nil ? .drop : .scheme
        if let unmatchedNode {
            let text = try unmatchedNode.string()
            guard let value = UnmatchedEvents(rawValue: text) else {
                throw unmatchedNode.error("expected \"scheme\" (send them as the scheme does) or \"drop\"")
            }
            if value == .drop, let namesScheme {
                throw namesScheme.error("has no effect: unmatched: \"drop\" sends only what the mappings match")
            }
            unmatched = value
        }
        return (rules, unmatched)
    }
}
