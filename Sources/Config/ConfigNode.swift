/// A value in the config together with its key path, so that every check can say exactly where
/// a mistake is: `routes[1].destinations[0].port: expected 1-65535, found 70000`.
package struct ConfigNode: Sendable {
    let value: ConfigValue
    let path: String

    package init(_ value: ConfigValue, path: String = "") {
        self.value = value
        self.path = path
    }

    func error(_ message: String) -> ConfigError { ConfigError(path: path, message: message) }

    func expected(_ what: String) -> ConfigError { error("expected \(what), found \(value.kindDescription)") }

    /// The members of an object, refusing keys not in `allowed` (a typo must not be silently
    /// ignored: it would leave a setting at its default without a word).
    func object(allowing allowed: [String]) throws(ConfigError) -> ConfigObject {
        guard case .object(let members) = value else { throw expected("an object") }
        for key in members.keys.sorted() where !allowed.contains(key) {
            let child = ConfigNode(members[key]!, path: Self.join(path, key))
            if let suggestion = Self.closest(to: key, among: allowed) {
                throw child.error("unknown key; did you mean '\(suggestion)'?")
            }
            throw child.error("unknown key; expected one of \(allowed.joined(separator: ", "))")
        }
        return ConfigObject(members: members, path: path)
    }

    package func string() throws(ConfigError) -> String {
        guard case .string(let text) = value else { throw expected("a string") }
        return text
    }

    func nonEmptyString() throws(ConfigError) -> String {
        let text = try string()
        guard !text.isEmpty else { throw error("expected a non-empty string") }
        return text
    }

    package func bool() throws(ConfigError) -> Bool {
        guard case .bool(let flag) = value else { throw expected("true or false") }
        return flag
    }

    package func number(in range: ClosedRange<Double>? = nil) throws(ConfigError) -> Double {
        guard case .number(let number) = value, number.isFinite else { throw expected("a number") }
        if let range, !range.contains(number) {
            throw expected("\(ConfigValue.format(range.lowerBound))-\(ConfigValue.format(range.upperBound))")
        }
        return number
    }

    func int(in range: ClosedRange<Int>) throws(ConfigError) -> Int {
        guard case .number(let number) = value, number.isFinite else { throw expected("an integer") }
        guard number == number.rounded() else { throw expected("an integer") }
        guard number >= Double(range.lowerBound) && number <= Double(range.upperBound) else {
            throw expected("\(range.lowerBound)-\(range.upperBound)")
        }
        return Int(number)
    }

    package func array() throws(ConfigError) -> [ConfigNode] {
        guard case .array(let elements) = value else { throw expected("an array") }
        return elements.enumerated().map { ConfigNode($1, path: "\(path)[\($0)]") }
    }

    /// A string, or an array of strings (so one-element lists need no brackets).
    func strings() throws(ConfigError) -> [String] {
        if case .string(let text) = value { return [text] }
        guard case .array = value else { throw expected("a string or an array of strings") }
        var result: [String] = []
        for element in try array() { result.append(try element.string()) }
        return result
    }

    static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The allowed key nearest to a typo, if it is near enough to be what was meant.
    static func closest(to key: String, among candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance(key.lowercased(), $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(2, key.count / 3) else { return nil }
        return best.0
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}

/// The members of a config object, read by key with their paths.
package struct ConfigObject {
    let members: [String: ConfigValue]
    let path: String

    /// The member `key`, or nil when it is absent.
    subscript(_ key: String) -> ConfigNode? {
        members[key].map { ConfigNode($0, path: ConfigNode.join(path, key)) }
    }

    /// The member `key`, which must be present.
    func required(_ key: String) throws(ConfigError) -> ConfigNode {
        guard let node = self[key] else {
            throw ConfigError(path: ConfigNode.join(path, key), message: "required key is missing")
        }
        return node
    }

    var keys: [String] { members.keys.sorted() }
}
