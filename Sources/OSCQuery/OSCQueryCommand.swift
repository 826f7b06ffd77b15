import JSON

/// What a WebSocket client asks for in a text frame: `{"COMMAND":"LISTEN","DATA":"/path"}`
/// (send this method's value whenever it changes) or IGNORE (stop); and, from the status page,
/// `{"COMMAND":"STATUS"}` (send the bridge's status as it changes), `{"COMMAND":"MONITOR"}`
/// (send the events flowing through) and `{"COMMAND":"PAUSE"}` (stop sending them). Paths are
/// exact.
package enum OSCQueryCommand: Sendable, Equatable {
    case listen(String)
    case ignore(String)
    case status
    case monitor
    /// The monitor stopped for this client, the status kept (`MONITOR` resumes it).
    case pause

    /// The longest text message a client may send; a longer one closes its connection (1009).
    package static let textLimit = 1024

    /// The command in `text`; nil for anything else: not JSON, not an object, another command,
    /// a DATA that is not a path (a string starting with `/`), or a text longer than
    /// ``textLimit``.
    package init?(_ text: String) {
        guard text.utf8.count <= Self.textLimit, case .object(let fields)? = try? JSON5Reader.parse(text),
            case .string(let command)? = fields["COMMAND"]
        else { return nil }
        switch command {
        case "STATUS": self = .status
        case "MONITOR": self = .monitor
        case "PAUSE": self = .pause
        case "LISTEN", "IGNORE":
            guard case .string(let path)? = fields["DATA"], path.hasPrefix("/") else { return nil }
            self = command == "LISTEN" ? .listen(path) : .ignore(path)
        default: return nil
        }
    }
}

/// What a namespace change is told to WebSocket clients as: PATH_ADDED and PATH_REMOVED (DATA
/// the path, a string, as the proposal has it) for each method or whole container that came or
/// went, or one PATH_CHANGED (DATA `/`) in place of too many of them.
package enum OSCQueryPathChange: Sendable, Equatable {
    case added(String)
    case removed(String)
    case changed(String)

    /// More changes than this in one update become one PATH_CHANGED `/`.
    static let limit = 32

    /// The changes from the methods `old` to the methods `new`, removals first, each sorted: a
    /// container that is gone (an output removed) is one PATH_REMOVED of the container, not one
    /// per method under it, and a new one one PATH_ADDED; one `.changed("/")` when there are
    /// more than ``limit``.
    package static func changes(from old: Set<String>, to new: Set<String>) -> [OSCQueryPathChange] {
        let removed = topmost(old.subtracting(new), noneIn: new)
        let added = topmost(new.subtracting(old), noneIn: old)
        if removed.count + added.count > limit { return [.changed("/")] }
        return removed.map { .removed($0) } + added.map { .added($0) }
    }

    /// Each path in `paths` replaced by its highest container that has no method of `other`
    /// under it (the path itself when there is none), without repeats, sorted.
    private static func topmost(_ paths: Set<String>, noneIn other: Set<String>) -> [String] {
        var containers: Set<Substring> = []
        for path in other {
            for index in path.indices.dropFirst() where path[index] == "/" { containers.insert(path[..<index]) }
        }
        var result: Set<String> = []
        for path in paths {
            let highest = path.indices.dropFirst().first { path[$0] == "/" && !containers.contains(path[..<$0]) }
            result.insert(highest.map { String(path[..<$0]) } ?? path)
        }
        return result.sorted()
    }

    /// The text frame: `{"COMMAND":"PATH_REMOVED","DATA":"/midi/old"}`.
    package var text: String {
        let (command, path) =
            switch self {
            case .added(let path): ("PATH_ADDED", path)
            case .removed(let path): ("PATH_REMOVED", path)
            case .changed(let path): ("PATH_CHANGED", path)
            }
        return JSONWriter.text(.object(["COMMAND": .string(command), "DATA": .string(path)]))
    }
}
