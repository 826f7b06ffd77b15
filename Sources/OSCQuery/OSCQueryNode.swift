import JSON

/// One node of an OSCQuery address space (Vidvox's OSCQuery proposal): an OSC method, a
/// container of other nodes, or both (`/midi` is TouchOSC's method and the default scheme's
/// container).
public struct OSCQueryNode: Sendable, Equatable {
    /// What a method takes: its OSC type tags, a range per argument, and what it does.
    public struct Method: Sendable, Equatable {
        /// The type tag string (`"ii"`); empty for a method that takes no arguments.
        public var types: String
        /// One entry per type tag: `{ MIN, MAX }`, or null where there is no range (a blob).
        public var ranges: [ClosedRange<Double>?]
        public var description: String

        /// Creates a method; `ranges` has one entry per character of `types`.
        public init(types: String, ranges: [ClosedRange<Double>?], description: String) {
            precondition(ranges.count == types.utf8.count, "OSCQueryNode.Method: one range per type tag")
            self.types = types
            self.ranges = ranges
            self.description = description
        }
    }

    /// The node's OSC address (`/midi/synth/1/note_on`; `/` for the root).
    public var fullPath: String
    /// Set when the node is a method.
    public var method: Method?
    /// What a container holds, by name; empty for a plain method.
    public var contents: [String: OSCQueryNode] = [:]
    /// What a container is; methods carry their own in ``Method/description``.
    public var containerDescription: String?

    /// An empty container at `fullPath`.
    public init(fullPath: String, containerDescription: String? = nil) {
        self.fullPath = fullPath
        self.containerDescription = containerDescription
    }

    /// ACCESS: 2 (may only be set) for a method, whose value nothing can read back; 0 for a
    /// container.
    public var access: Int { method == nil ? 0 : 2 }

    /// The node below this one at `path` (names between `/`), or nil when there is none.
    public func node(at path: some Collection<Substring>) -> OSCQueryNode? {
        guard let first = path.first else { return self }
        return contents[String(first)]?.node(at: path.dropFirst())
    }

    /// Adds `method` at `path` below this node, making the containers on the way. The first
    /// method given an address keeps it: the input tries mappings before the built-in
    /// addresses, so that is the one a message reaches.
    mutating func insert(_ method: Method, at path: ArraySlice<String>) {
        guard let name = path.first else {
            if self.method == nil { self.method = method }
            return
        }
        let childPath = (fullPath == "/" ? "" : fullPath) + "/" + name
        contents[name, default: OSCQueryNode(fullPath: childPath)].insert(method, at: path.dropFirst())
    }

    /// The attributes OSCQuery names for this node, by key, each present only when the node has
    /// it: FULL_PATH and ACCESS always, DESCRIPTION, TYPE and RANGE for methods, CONTENTS
    /// (with every node below, whole) for containers.
    public func attributes() -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["FULL_PATH": .string(fullPath), "ACCESS": .number(Double(access))]
        if let method {
            fields["DESCRIPTION"] = .string(method.description)
            // A method without arguments has no TYPE: the proposal lets it be left out.
            if !method.types.isEmpty {
                fields["TYPE"] = .string(method.types)
                fields["RANGE"] = .array(
                    method.ranges.map { range in
                        range.map { .object(["MIN": .number($0.lowerBound), "MAX": .number($0.upperBound)]) }
                            ?? .null
                    })
            }
        } else if let containerDescription {
            fields["DESCRIPTION"] = .string(containerDescription)
        }
        if !contents.isEmpty { fields["CONTENTS"] = .object(contents.mapValues { .object($0.attributes()) }) }
        return fields
    }

    /// How many methods this node and those below it have.
    public var methodCount: Int { (method == nil ? 0 : 1) + contents.values.reduce(0) { $0 + $1.methodCount } }
}
