/// Exit statuses, from sysexits(3), so scripts can tell a typo from a missing device.
enum ExitCode: Int32 {
    case ok = 0
    /// A command-line mistake (EX_USAGE).
    case usage = 64
    /// Input data was wrong: a config file, a MIDI command (EX_DATAERR).
    case dataError = 65
    /// A needed service is missing: the sequencer, a port (EX_UNAVAILABLE).
    case unavailable = 69
    /// An internal error (EX_SOFTWARE).
    case software = 70
    /// An I/O failure (EX_IOERR).
    case ioError = 74
}

/// A command-line mistake, reported with the command's usage line.
struct UsageError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// One `aseqosc` subcommand: a name, a one-line abstract, a help text, a parse step that throws
/// a ``UsageError`` and a run step that returns an exit status.
protocol Command {
    static var name: String { get }
    static var abstract: String { get }
    /// The full `--help` text, starting with the usage line.
    static var help: String { get }
    init(arguments: inout ArgumentScanner) throws(UsageError)
    func run() -> ExitCode
}

/// Reads flags, options and positional words off a command line, then insists nothing is left.
struct ArgumentScanner {
    private(set) var remaining: [String]

    package init(_ arguments: [String]) { remaining = arguments }

    /// Removes `name` (or any of `names`) if present; returns whether it was.
    mutating func flag(_ names: String...) -> Bool {
        guard let index = remaining.firstIndex(where: names.contains) else { return false }
        remaining.remove(at: index)
        return true
    }

    /// Removes `--name VALUE` or `--name=VALUE` and returns the value.
    mutating func option(_ name: String) throws(UsageError) -> String? {
        if let index = remaining.firstIndex(of: name) {
            guard index + 1 < remaining.count else { throw UsageError("\(name) needs a value") }
            let value = remaining[index + 1]
            remaining.removeSubrange(index...index + 1)
            return value
        }
        if let index = remaining.firstIndex(where: { $0.hasPrefix(name + "=") }) {
            let value = String(remaining[index].dropFirst(name.count + 1))
            remaining.remove(at: index)
            return value
        }
        return nil
    }

    /// Takes every remaining word as a positional argument; an unknown `--option` is an error.
    /// A lone `-` (stdin) and words after `--` are positional.
    mutating func positionals() throws(UsageError) -> [String] {
        var words: [String] = []
        var afterDashes = false
        for word in remaining {
            if afterDashes || word == "-" || !word.hasPrefix("-") || Self.isNumber(word) {
                words.append(word)
            } else if word == "--" {
                afterDashes = true
            } else {
                throw UsageError("unknown option '\(word)'")
            }
        }
        remaining = []
        return words
    }

    /// Fails if anything is left unread.
    func finish() throws(UsageError) {
        if let first = remaining.first {
            throw UsageError(first.hasPrefix("-") ? "unknown option '\(first)'" : "unexpected argument '\(first)'")
        }
    }

    private static func isNumber(_ word: String) -> Bool { Int(word) != nil }
}
