import JSON
import OSC

/// One node of an OSCQuery address space (Vidvox's OSCQuery proposal): an OSC method, a
/// container of other nodes, or both (`/midi` is TouchOSC's method and the default scheme's
/// container).
package struct OSCQueryNode: Sendable, Equatable {
    /// What a method takes: its OSC type tags, a range per argument, and what it does.
    package struct Method: Sendable, Equatable {
        /// The type tag string (`"ii"`); empty for a method that takes no arguments.
        var types: String
        /// One entry per type tag: `{ MIN, MAX }`, or null where there is no range (a blob).
        var ranges: [ClosedRange<Double>?]
        var description: String
        /// Whether it can only be read (ACCESS 1): what arrives at an input port, which the
        /// OSC input does not take.
        var readOnly: Bool

        /// Creates a method; `ranges` has one entry per character of `types`.
        package init(types: String, ranges: [ClosedRange<Double>?], description: String, readOnly: Bool = false) {
            precondition(ranges.count == types.utf8.count, "OSCQueryNode.Method: one range per type tag")
            self.types = types
            self.ranges = ranges
            self.description = description
            self.readOnly = readOnly
        }
    }

    /// The node's OSC address (`/midi/synth/1/note_on`; `/` for the root).
    var fullPath: String
    /// Set when the node is a method.
    package var method: Method?
    /// What a container holds, by name; empty for a plain method.
    var contents: [String: OSCQueryNode] = [:]
    /// What a container is; methods carry their own in ``Method/description``.
    var containerDescription: String?

    /// An empty container at `fullPath`.
    package init(fullPath: String, containerDescription: String? = nil) {
        self.fullPath = fullPath
        self.containerDescription = containerDescription
    }

    /// ACCESS: 0 for a container; for a method 1 when it can only be read, 3 (set and read)
    /// when `values` keeps its value, else 2 (may only be set).
    func access(values: (any OSCQueryValueSource)? = nil) -> Int {
        guard let method else { return 0 }
        if method.readOnly { return 1 }
        return values?.isReadable(fullPath) == true ? 3 : 2
    }

    /// The node below this one at `path` (names between `/`), or nil when there is none.
    package func node(at path: some Collection<Substring>) -> OSCQueryNode? {
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
    /// it: FULL_PATH and ACCESS always, DESCRIPTION, TYPE and RANGE for methods, VALUE for a
    /// method `values` has a value for (when `withValues`), CONTENTS (with every node below,
    /// whole) for containers.
    package func attributes(values: (any OSCQueryValueSource)? = nil, withValues: Bool = true) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "FULL_PATH": .string(fullPath), "ACCESS": .number(Double(access(values: values))),
        ]
        if withValues, method != nil, let values, values.isReadable(fullPath), let value = values.value(at: fullPath) {
            fields["VALUE"] = Self.json(value)
        }
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
        if !contents.isEmpty {
            fields["CONTENTS"] = .object(
                contents.mapValues { .object($0.attributes(values: values, withValues: withValues)) })
        }
        return fields
    }

    /// A VALUE: one item per argument, numbers, strings and booleans as JSON has them, null for
    /// what JSON cannot show (`m`, `b`, nil, impulse), as the proposal's type table says.
    package static func json(_ arguments: [OSCArgument]) -> JSONValue {
        .array(
            arguments.map { argument in
                switch argument {
                case .int32(let value): .number(Double(value))
                case .float32(let value): .number(Double(value))
                case .int64(let value): .number(Double(value))
                case .double(let value): .number(value)
                case .string(let value): .string(value)
                case .true: .bool(true)
                case .false: .bool(false)
                case .blob, .timeTag, .nil, .impulse, .midi: .null
                }
            })
    }

    /// The addresses of every method at or below this node.
    package var methodPaths: Set<String> {
        var paths: Set<String> = method == nil ? [] : [fullPath]
        for child in contents.values { paths.formUnion(child.methodPaths) }
        return paths
    }

    /// How many methods this node and those below it have.
    package var methodCount: Int { (method == nil ? 0 : 1) + contents.values.reduce(0) { $0 + $1.methodCount } }
}
