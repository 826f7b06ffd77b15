/// Prints a ``JSONValue`` as JSON text: keys sorted so the output is stable, integers without a
/// fraction, non-finite numbers (which JSON cannot carry) as `null`.
package enum JSONWriter {
    /// The text of `value`; `pretty` puts one member per line, indented by two spaces.
    package static func text(_ value: JSONValue, pretty: Bool = false) -> String {
        var output = ""
        write(value, to: &output, pretty: pretty, indent: 0)
        return output
    }

    private static func write(_ value: JSONValue, to output: inout String, pretty: Bool, indent: Int) {
        switch value {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .number(let number): output += format(number)
        case .string(let text): quote(text, to: &output)
        case .array(let elements):
            guard !elements.isEmpty else { return output += "[]" }
            output += "["
            for (position, element) in elements.enumerated() {
                if position > 0 { output += "," }
                newline(&output, pretty: pretty, indent: indent + 1)
                write(element, to: &output, pretty: pretty, indent: indent + 1)
            }
            newline(&output, pretty: pretty, indent: indent)
            output += "]"
        case .object(let members):
            guard !members.isEmpty else { return output += "{}" }
            output += "{"
            for (position, key) in members.keys.sorted().enumerated() {
                if position > 0 { output += "," }
                newline(&output, pretty: pretty, indent: indent + 1)
                quote(key, to: &output)
                output += pretty ? ": " : ":"
                write(members[key]!, to: &output, pretty: pretty, indent: indent + 1)
            }
            newline(&output, pretty: pretty, indent: indent)
            output += "}"
        }
    }

    private static func newline(_ output: inout String, pretty: Bool, indent: Int) {
        guard pretty else { return }
        output += "\n"
        output += String(repeating: "  ", count: indent)
    }

    /// `3`, `0.5`, `1e-05`: integers up to 2^53 without a fraction, others as Swift prints them
    /// (the shortest text that reads back to the same number).
    static func format(_ number: Double) -> String {
        guard number.isFinite else { return "null" }
        if number == number.rounded(), abs(number) < 9_007_199_254_740_992 { return String(Int64(number)) }
        return String(number)
    }

    private static func quote(_ text: String, to output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            case "\u{00}"..."\u{1F}":
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
