/// Reads JSON5 (json5.org): JSON plus comments, trailing commas, unquoted keys, single-quoted
/// strings, hexadecimal numbers, `Infinity` and `NaN`. Any input gets a value or a
/// ``JSONSyntaxError`` naming the line and column; nesting is bounded so no input can exhaust
/// the stack.
package struct JSON5Reader {
    /// How deep arrays and objects may nest.
    static let maximumDepth = 256

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    /// Parses one JSON5 value that fills the whole text (comments and white space aside).
    package static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        var reader = JSON5Reader(bytes: bytes)
        reader.skipBOM()
        try reader.skipSpace()
        let value = try reader.value()
        try reader.skipSpace()
        guard reader.index == bytes.count else { throw reader.error("unexpected text after the value") }
        return value
    }

    /// Parses UTF-8 text.
    package static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    // MARK: Values

    private mutating func value() throws(JSONSyntaxError) -> JSONValue {
        guard let byte = peek() else { throw error("the text ends where a value should be") }
        switch byte {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""), UInt8(ascii: "'"): return .string(try string())
        case UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "I"), UInt8(ascii: "N"):
            return .number(try number())
        default:
            if consumeWord("true") { return .bool(true) }
            if consumeWord("false") { return .bool(false) }
            if consumeWord("null") { return .null }
            if byte < 0x80, byte > 0x20, !Self.isIdentifier(byte, first: false) {
                throw error("expected a value, found '\(Character(Unicode.Scalar(byte)))'")
            }
            throw error("expected a value (object, array, string, number, true, false or null)")
        }
    }

    private mutating func object() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        index += 1  // {
        var members: [String: JSONValue] = [:]
        while true {
            try skipSpace()
            if peek() == UInt8(ascii: "}") { break }
            let key = try memberName()
            try skipSpace()
            guard peek() == UInt8(ascii: ":") else { throw error("expected ':' after the key '\(key)'") }
            index += 1
            try skipSpace()
            members[key] = try value()
            try skipSpace()
            if peek() == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard peek() == UInt8(ascii: "}") else { throw error("expected ',' or '}' in an object") }
            break
        }
        index += 1  // }
        depth -= 1
        return .object(members)
    }

    private mutating func array() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        index += 1  // [
        var elements: [JSONValue] = []
        while true {
            try skipSpace()
            if peek() == UInt8(ascii: "]") { break }
            elements.append(try value())
            try skipSpace()
            if peek() == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard peek() == UInt8(ascii: "]") else { throw error("expected ',' or ']' in an array") }
            break
        }
        index += 1  // ]
        depth -= 1
        return .array(elements)
    }

    private mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw error("arrays and objects nest more than \(Self.maximumDepth) deep")
        }
    }

    /// A key: a quoted string or an identifier (letters, digits, `_`, `$`, and any non-ASCII text).
    private mutating func memberName() throws(JSONSyntaxError) -> String {
        if let byte = peek(), byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") { return try string() }
        let start = index
        while let byte = peek(), Self.isIdentifier(byte, first: index == start) { index += 1 }
        guard index > start else { throw error("expected a key (a name or a quoted string)") }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private static func isIdentifier(_ byte: UInt8, first: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"),
            UInt8(ascii: "$"), 0x80...0xFF:
            return true
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return !first
        default: return false
        }
    }

    // MARK: Strings

    private mutating func string() throws(JSONSyntaxError) -> String {
        let quote = bytes[index]
        index += 1
        var text: [UInt8] = []
        while true {
            guard let byte = peek() else { throw error("a string is not closed") }
            index += 1
            switch byte {
            case quote:
                return String(decoding: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try escape(into: &text)
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                index -= 1
                throw error("a string is not closed before the end of the line")
            default:
                text.append(byte)
            }
        }
    }

    private mutating func escape(into text: inout [UInt8]) throws(JSONSyntaxError) {
        guard let byte = peek() else { throw error("a string is not closed") }
        index += 1
        switch byte {
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "v"): text.append(0x0B)
        case UInt8(ascii: "0"):
            if let next = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(next) {
                throw error("'\\0' may not be followed by a digit")
            }
            text.append(0)
        case UInt8(ascii: "1")...UInt8(ascii: "9"):
            index -= 1
            throw error("'\\\(Character(Unicode.Scalar(byte)))' is not an escape")
        case UInt8(ascii: "x"):
            append(scalar: try hexDigits(2), to: &text)
        case UInt8(ascii: "u"):
            var scalar = try hexDigits(4)
            if (0xD800..<0xDC00).contains(scalar), peek() == UInt8(ascii: "\\"), peek(1) == UInt8(ascii: "u") {
                let saved = index
                index += 2
                let low = try hexDigits(4)
                if (0xDC00..<0xE000).contains(low) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    index = saved
                }
            }
            append(scalar: scalar, to: &text)
        case UInt8(ascii: "\r"):
            if peek() == UInt8(ascii: "\n") { index += 1 }  // a line continuation
        case UInt8(ascii: "\n"):
            break  // a line continuation
        default:
            text.append(byte)  // \" \' \\ \/ and any other character stand for themselves
        }
    }

    private mutating func hexDigits(_ count: Int) throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<count {
            guard let byte = peek(), let digit = Self.hexValue(byte) else {
                throw error("expected \(count) hexadecimal digits in an escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private func append(scalar: UInt32, to text: inout [UInt8]) {
        // A lone surrogate cannot be UTF-8; it becomes U+FFFD as a decoder would make it.
        let character = Unicode.Scalar(scalar) ?? "\u{FFFD}"
        text.append(contentsOf: String(character).utf8)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    // MARK: Numbers

    private mutating func number() throws(JSONSyntaxError) -> Double {
        var sign = 1.0
        if let byte = peek(), byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") {
            sign = byte == UInt8(ascii: "-") ? -1 : 1
            index += 1
        }
        if consumeWord("Infinity") { return sign * .infinity }
        if consumeWord("NaN") { return .nan }
        if peek() == UInt8(ascii: "0"), let x = peek(1), x == UInt8(ascii: "x") || x == UInt8(ascii: "X") {
            index += 2
            var value = 0.0
            var digits = 0
            while let byte = peek(), let digit = Self.hexValue(byte) {
                value = value * 16 + Double(digit)
                digits += 1
                index += 1
            }
            guard digits > 0 else { throw error("expected hexadecimal digits after 0x") }
            try expectEndOfNumber()
            return sign * value
        }
        let start = index
        let integerDigits = skipDigits()
        if integerDigits > 1 && bytes[start] == UInt8(ascii: "0") {
            throw error("a number may not start with 0 (write 0x for hexadecimal)")
        }
        var fractionDigits = 0
        if peek() == UInt8(ascii: ".") {
            index += 1
            fractionDigits = skipDigits()
        }
        guard integerDigits + fractionDigits > 0 else { throw error("expected a number") }
        if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            index += 1
            if let byte = peek(), byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") { index += 1 }
            guard skipDigits() > 0 else { throw error("expected digits in the exponent") }
        }
        try expectEndOfNumber()
        // The syntax is checked above; what is left is what strtod reads (".5", "1.", "1.e3").
        let literal = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(literal) else { throw error("'\(literal)' is not a number") }
        return sign * value
    }

    private mutating func skipDigits() -> Int {
        let start = index
        while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
        return index - start
    }

    private func expectEndOfNumber() throws(JSONSyntaxError) {
        if let byte = peek(), Self.isIdentifier(byte, first: false) || byte == UInt8(ascii: ".") {
            throw error("unexpected '\(Character(Unicode.Scalar(byte)))' in a number")
        }
    }

    // MARK: White space and comments

    private mutating func skipBOM() {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    private mutating func skipSpace() throws(JSONSyntaxError) {
        while let byte = peek() {
            switch byte {
            case 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20:
                index += 1
            case 0xC2 where peek(1) == 0xA0:  // no-break space
                index += 2
            case 0xE2 where peek(1) == 0x80 && (peek(2) == 0xA8 || peek(2) == 0xA9):  // line, paragraph separator
                index += 3
            case 0xEF where peek(1) == 0xBB && peek(2) == 0xBF:  // byte order mark
                index += 3
            case UInt8(ascii: "/") where peek(1) == UInt8(ascii: "/"):
                while let byte = peek(), byte != 0x0A, byte != 0x0D { index += 1 }
            case UInt8(ascii: "/") where peek(1) == UInt8(ascii: "*"):
                let start = index
                index += 2
                while index < bytes.count && !(bytes[index] == UInt8(ascii: "*") && peek(1) == UInt8(ascii: "/")) {
                    index += 1
                }
                guard index < bytes.count else {
                    index = start
                    throw error("a /* comment is not closed")
                }
                index += 2
            default:
                return
            }
        }
    }

    // MARK: Helpers

    private func peek(_ offset: Int = 0) -> UInt8? {
        index + offset < bytes.count ? bytes[index + offset] : nil
    }

    private mutating func consumeWord(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let matches = word.withUTF8Buffer { bytes[index..<index + count].elementsEqual($0) }
        guard matches else { return false }
        if index + count < bytes.count, Self.isIdentifier(bytes[index + count], first: false) { return false }
        index += count
        return true
    }

    private func error(_ reason: String) -> JSONSyntaxError {
        var line = 1
        var column = 1
        var position = 0
        while position < min(index, bytes.count) {
            if bytes[position] == 0x0A {
                line += 1
                column = 1
            } else if bytes[position] & 0xC0 != 0x80 {
                column += 1
            }
            position += 1
        }
        return JSONSyntaxError(line: line, column: column, reason: reason)
    }
}
