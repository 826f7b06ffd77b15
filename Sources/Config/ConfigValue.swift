import JSON

/// A parsed JSON5 value, before it is checked against what aseqosc expects.
package typealias ConfigValue = JSONValue

extension JSONValue {
    /// Parses JSON5 text: comments, trailing commas, unquoted keys, single quotes, hex numbers.
    package static func parseJSON5(_ bytes: [UInt8]) throws(ConfigError) -> ConfigValue {
        // A config is text: anything that is not UTF-8 is refused with its place first.
        try checkUTF8(bytes)
        do {
            return try JSON5Reader.parse(bytes)
        } catch {
            throw ConfigError(path: "", message: "not valid JSON5 at \(error)")
        }
    }

    /// Throws, naming the line and column, unless `data` is valid UTF-8.
    package static func checkUTF8(_ data: [UInt8]) throws(ConfigError) {
        var bytes = data.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var line = 1
        var column = 1
        while true {
            switch parser.parseScalar(from: &bytes) {
            case .valid(let scalar):
                if scalar.first == UInt8(ascii: "\n") {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
            case .emptyInput:
                return
            case .error:
                throw ConfigError(
                    path: "", message: "not UTF-8 text: an invalid byte at line \(line), column \(column)")
            }
        }
    }

    /// How a value is named in "expected X, found Y" messages.
    package var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let value): Self.format(value)
        case .string(let value): "\"\(value)\""
        case .array: "an array"
        case .object: "an object"
        }
    }

    package static func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}

/// A config mistake: where it is (`routes[1].destinations[0].port`) and what was expected.
package struct ConfigError: Error, Equatable, CustomStringConvertible {
    /// The key path from the top of the file; empty for the file as a whole.
    var path: String
    package var message: String
    /// The config file, when the text came from one.
    var file: String?

    package init(path: String, message: String, file: String? = nil) {
        self.path = path
        self.message = message
        self.file = file
    }

    package var description: String {
        (file.map { "\($0): " } ?? "") + (path.isEmpty ? message : "\(path): \(message)")
    }
}
