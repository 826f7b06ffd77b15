import Glibc
import Synchronization

/// Severity of a log line; the raw values are syslog's priorities, which journald reads from a
/// `<N>` prefix.
package enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    package init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = level
    }

    /// `error`, `warning`, ... as `--log-level` takes it. Spelled out: `"\(level)"` would find a
    /// case's name by reflection, a million instructions the first time.
    var name: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }

    package static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue > rhs.rawValue }
}

/// Writes log lines to stderr: with journald priority prefixes (`<6>...`) when stderr is the
/// journal (systemd sets `JOURNAL_STREAM`), with a timestamp otherwise. Never used per event.
package final class Logger: Sendable {
    private let minimum: LogLevel
    private let forJournal: Bool
    private let lock = Mutex(())

    package init(level: LogLevel, environment: [String: String] = ProcessEnvironment.current) {
        minimum = level
        forJournal = environment["JOURNAL_STREAM"] != nil
    }

    func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level >= minimum else { return }
        let prefix: String
        if forJournal {
            prefix = "<\(level.rawValue)>"
        } else {
            prefix =
                WallClock.timestamp() + " " + Self.label(level) + " "
        }
        let line = prefix + message() + "\n"
        lock.withLock { _ in
            var line = line
            line.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
        }
    }

    package func error(_ message: @autoclosure () -> String) { log(.error, message()) }
    package func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    package func notice(_ message: @autoclosure () -> String) { log(.notice, message()) }
    package func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    package func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }

    /// `INFO   `: the level in capitals, padded to one width so messages line up.
    static func label(_ level: LogLevel) -> String {
        let name = level.name.uppercased()
        return name + String(repeating: " ", count: max(0, 7 - name.count))
    }
}
