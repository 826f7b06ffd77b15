/// A port as a user names it on the command line or in the config, before it is looked up.
///
/// The forms, read like aconnect's:
///
/// | text                        | form                                                          |
/// |-----------------------------|---------------------------------------------------------------|
/// | `20:0`                      | `.address`: client 20, port 0                                 |
/// | `20`                        | `.client`: client 20, its first port of the wanted direction  |
/// | `KeyStep Pro`               | `.name`: a client name (its first port) or a prefix of one    |
/// | `KeyStep Pro:MIDI 2`        | `.name`: `client:port` names, or a prefix of that string      |
/// | `KeyStep Pro:1`             | `.name`: port number 1 of the client named `KeyStep Pro`      |
/// | `/KeyStep.*/`               | `.pattern`: a regular expression over `client:port` names     |
/// | `*`                         | `.allHardware`: every hardware port of the wanted direction   |
///
/// Text of digits only (`20`, `20:0`) is always a number, never a name: a client whose name is
/// digits only is addressed by its number. Text starting with `/` is always a regular expression.
/// Everything else is a name, and since client and port names may contain `:` themselves
/// ("Midi Through:Midi Through Port-0", a client called "Foo:Bar"), a name is not split at parse
/// time: ``resolve(in:direction:excludingClient:)`` tries every reading against the ports there
/// are, with the precedence it documents.
///
/// Two specs are equal when their text is: `20:0` and `020:0` name the same port but are not equal.
package struct PortSpec: Hashable, Sendable, CustomStringConvertible {
    /// What the text asks for.
    package enum Form: Hashable, Sendable {
        /// `client:port` numbers.
        case address(PortAddress)
        /// A client number: the client's first port of the wanted direction.
        case client(UInt8)
        /// A client name, `client:port` names or `client:port number`, exactly or as a prefix.
        case name(String)
        /// A regular expression (the text between the slashes), searched for in
        /// `"<client name>:<port name>"`; it may match anywhere unless anchored with `^` and `$`.
        case pattern(String)
        /// `*`: every hardware port of the wanted direction.
        case allHardware
    }

    /// The text as the user wrote it.
    let text: String
    /// What the text asks for.
    package let form: Form

    /// Parses a port spec, rejecting numbers out of range and invalid regular expressions.
    package init(parsing text: String) throws(PortSpecParseError) {
        self.text = text
        self.form = try Self.form(of: text)
    }

    /// The user's text, so messages quote what they wrote.
    package var description: String { text }

    private static func form(of text: String) throws(PortSpecParseError) -> Form {
        if text.allSatisfy(\.isWhitespace) { throw .empty }
        if text == "*" { return .allHardware }
        if text.hasPrefix("/") {
            guard text.count >= 2, text.hasSuffix("/") else { throw .unterminatedPattern(text) }
            let pattern = String(text.dropFirst().dropLast())
            if pattern.isEmpty { throw .emptyPattern(text) }
            do {
                _ = try Regex(pattern)
            } catch {
                throw .invalidPattern(text, reason: "\(error)")
            }
            return .pattern(pattern)
        }
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.allSatisfy(isDigits) else { return .name(text) }
        let client = try number(parts[0], in: text)
        guard parts.count == 2 else { return .client(client) }
        return .address(PortAddress(client: client, port: try number(parts[1], in: text)))
    }

    /// Whether `text` is one or more ASCII digits (`UInt8(_:)` would also take a `+` sign).
    package static func isDigits(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// The value of a run of ASCII digits, which must fit a client or port number (0-255).
    private static func number(_ digits: Substring, in text: String) throws(PortSpecParseError) -> UInt8 {
        var value = 0
        for digit in digits.utf8 {
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
            // Stop before overflowing on absurdly long numbers; anything past 255 is out anyway.
            if value > Int(UInt8.max) { throw .numberOutOfRange(text, number: String(digits)) }
        }
        return UInt8(value)
    }
}

extension PortSpec {
    /// Which ports a spec may resolve to: ones aseqosc reads from, or ones it writes to.
    package enum Direction: Hashable, Sendable, CustomStringConvertible {
        /// Ports others can read from by subscribing (`capabilities.isSource`).
        case source
        /// Ports others can write to by subscribing (`capabilities.isDestination`).
        case destination

        package var description: String {
            switch self {
            case .source: "source"
            case .destination: "destination"
            }
        }
    }
}

/// Why a port spec could not be parsed; the message says what is wrong and which forms work.
package enum PortSpecParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The text is empty or blank.
    case empty
    /// A client or port number above 255.
    case numberOutOfRange(String, number: String)
    /// Text starting with `/` that does not end with one.
    case unterminatedPattern(String)
    /// `//`: a regular expression with nothing in it.
    case emptyPattern(String)
    /// The text between the slashes is not a valid regular expression.
    case invalidPattern(String, reason: String)

    /// The forms a port spec may take, appended to every message.
    package static let acceptedForms =
        #"a port is 20:0 (client:port), 20 (a client number), "Client Name", "Client Name:Port Name", "#
        + #""Client Name:1" (a port number), /regex/ (matched against "client:port" names) "#
        + "or * (every hardware port)"

    package var description: String {
        let problem =
            switch self {
            case .empty:
                "empty port spec"
            case .numberOutOfRange(let text, let number):
                "'\(text)': \(number) is not a client or port number (0-255)"
            case .unterminatedPattern(let text):
                "'\(text)' starts a regular expression but does not end with '/'"
            case .emptyPattern(let text):
                "'\(text)' is an empty regular expression"
            case .invalidPattern(let text, let reason):
                "'\(text)' is not a valid regular expression: \(reason)"
            }
        return problem + "; " + Self.acceptedForms
    }
}
