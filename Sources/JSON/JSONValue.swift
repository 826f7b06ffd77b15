/// A JSON value: what the JSON5 reader produces and the writer prints. Pure Swift, so the
/// daemon reads its config and writes its status without Foundation.
package indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

/// Where a JSON5 text stops being valid, with the line and column a person looks for.
package struct JSONSyntaxError: Error, Equatable, CustomStringConvertible {
    var line: Int
    var column: Int
    var reason: String

    package init(line: Int, column: Int, reason: String) {
        self.line = line
        self.column = column
        self.reason = reason
    }

    package var description: String { "line \(line), column \(column): \(reason)" }
}
