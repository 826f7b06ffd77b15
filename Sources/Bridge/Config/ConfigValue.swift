import Foundation

/// A parsed JSON5 value, before it is checked against what aseqosc expects.
public indirect enum ConfigValue: Sendable, Equatable, Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([ConfigValue])
    case object([String: ConfigValue])

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        if let object = try? decoder.container(keyedBy: Key.self) {
            var members: [String: ConfigValue] = [:]
            for key in object.allKeys { members[key.stringValue] = try object.decode(ConfigValue.self, forKey: key) }
            self = .object(members)
        } else if var array = try? decoder.unkeyedContainer() {
            var elements: [ConfigValue] = []
            while !array.isAtEnd { elements.append(try array.decode(ConfigValue.self)) }
            self = .array(elements)
        } else {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                self = .null
            } else if let bool = try? single.decode(Bool.self) {
                self = .bool(bool)
            } else if let number = try? single.decode(Double.self) {
                self = .number(number)
            } else {
                self = .string(try single.decode(String.self))
            }
        }
    }

    /// Parses JSON5 text: comments, trailing commas, unquoted keys, single quotes, hex numbers.
    public static func parseJSON5(_ data: Data) throws(ConfigError) -> ConfigValue {
        // Before the decoder: Foundation's JSON5 reader traps (CodableUtilities.swift:685) on an
        // unquoted key holding three or more invalid UTF-8 bytes, and a reload must never take
        // the daemon down. A config is text, so anything that is not UTF-8 is refused here.
        try checkUTF8(data)
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        do {
            return try decoder.decode(ConfigValue.self, from: data)
        } catch {
            throw ConfigError(
                path: "", message: "not valid JSON5 (look for a missing comma, quote or bracket)")
        }
    }

    /// Throws, naming the line and column, unless `data` is valid UTF-8.
    static func checkUTF8(_ data: Data) throws(ConfigError) {
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
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let value): Self.format(value)
        case .string(let value): "\"\(value)\""
        case .array: "an array"
        case .object: "an object"
        }
    }

    static func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}

/// A config mistake: where it is (`routes[1].destinations[0].port`) and what was expected.
public struct ConfigError: Error, Equatable, CustomStringConvertible {
    /// The key path from the top of the file; empty for the file as a whole.
    public var path: String
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}
