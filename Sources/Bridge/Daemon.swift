import Config
import Glibc
import JSON
import OSCQuery
import Platform
import Service
import Synchronization

/// `aseqosc run` as a whole: the bridge, its OSCQuery server, its DNS-SD announcement, the
/// control socket and the service manager, wired together and run until SIGTERM or SIGINT;
/// SIGHUP reloads. The command line only parses its options and calls ``run()``.
package struct Daemon {
    /// How a run ended, as the command's exit status.
    package enum Outcome: Sendable {
        case stopped
        /// The config was refused at start.
        case configRefused
        /// The sequencer, or something else the bridge needs, is missing.
        case unavailable
    }

    var configPath: String
    var logLevel: LogLevel
    var controlPath: String
    /// What logs and `status` call this build.
    var version: String

    package init(configPath: String, logLevel: LogLevel, controlPath: String, version: String) {
        self.configPath = configPath
        self.logLevel = logLevel
        self.controlPath = controlPath
        self.version = version
    }

    /// Runs until SIGTERM or SIGINT, after which every held note has had its note-off.
    package func run() -> Outcome {
        // First of all, before any thread starts, so that every thread inherits the blocked
        // signals and a signal sent as soon as the bridge says it runs is never lost (or, for
        // SIGHUP, fatal).
        let signals = SignalSet([SIGTERM, SIGINT, SIGHUP])
        let log = Logger(level: logLevel)
        let notifier = ServiceNotifier()
        let config: BridgeConfig
        do {
            config = try ConfigParser.load(path: configPath)
        } catch {
            log.error("config refused: \(error)")
            return .configRefused
        }
        log.notice("aseqosc \(version) starting with \(configPath)")
        // With a watchdog, the input thread wakes at least four times per period even when
        // idle, so its progress counter shows it is alive; without one, an idle bridge sleeps.
        let idleWake = notifier.watchdogInterval.map { Int32(max(10, min(1000, $0.milliseconds / 4))) } ?? -1
        let bridge: Bridge
        do {
            bridge = try Bridge(config: config, log: log, idleWakeMilliseconds: idleWake)
        } catch {
            log.error(error.description)
            return .unavailable
        }
        bridge.start()
        // The page reads the status and reloads through parts made after it: they are handed
        // over once they exist, before the server that calls it starts.
        let parts = Mutex<(announcement: InputAnnouncement, query: QueryService, reloader: Reloader)?>(nil)
        let version = version
        let page = StatusPage(
            bridge: bridge, configPath: configPath,
            status: {
                guard let (announcement, query, _) = parts.withLock({ $0 }) else { return .object([:]) }
                return Self.statusJSON(bridge: bridge, announcement: announcement, query: query, version: version)
            },
            reload: {
                guard let reloader = parts.withLock({ $0?.reloader }) else {
                    return .failure(StatusPageRefusal("not running yet"))
                }
                return reloader.reload().mapError { StatusPageRefusal("\($0)") }
            })
        let query = QueryService(log: log, values: bridge.liveValues, page: page)
        let announcement = InputAnnouncement(log: log)
        let reloader = Reloader(
            bridge: bridge, configPath: configPath, log: log, notifier: notifier, announcement: announcement,
            query: query)
        parts.withLock { $0 = (announcement, query, reloader) }
        announcement.apply(config.oscInput, queryPort: query.apply(config))
        let control: ControlSocket?
        do {
            let socket = try ControlSocket(path: controlPath) { request in
                Self.answer(
                    request, bridge: bridge, reloader: reloader, announcement: announcement, query: query,
                    version: version)
            }
            socket.start()
            control = socket
            log.info("status on \(controlPath)")
        } catch {
            log.warning("no status socket: \(error)")
            control = nil
        }
        notifier.notify("READY=1\nSTATUS=\(bridge.statusLine)")
        log.notice("running: \(bridge.statusLine)")

        // Under a watchdog, a ping every half period, only while the input thread moves; without
        // one the main thread sleeps until a signal comes.
        let pingPeriod = notifier.watchdogInterval.map { Double($0.milliseconds) / 2000 }
        // STATUS= goes with a ping only when it changed.
        var lastProgress = UInt64.max
        var lastStatus = bridge.statusLine
        while true {
            guard let number = signals.wait(timeout: pingPeriod) else {
                let progress = bridge.inputProgress
                let status = bridge.statusLine
                if progress != lastProgress {
                    notifier.notify("WATCHDOG=1" + (status != lastStatus ? "\nSTATUS=\(status)" : ""))
                    lastStatus = status
                }
                lastProgress = progress
                continue
            }
            if number == SIGHUP {
                _ = reloader.reload()
                continue
            }
            break
        }
        notifier.notify("STOPPING=1")
        log.notice("stopping: sending note-offs for held notes")
        control?.stop()
        announcement.apply(nil)
        query.apply(nil)
        bridge.stop()
        log.notice("stopped: \(bridge.statusLine)")
        return .stopped
    }

    /// What the control socket answers: `reload`, `status` (text) or the status as JSON.
    static func answer(
        _ request: String, bridge: Bridge, reloader: Reloader, announcement: InputAnnouncement, query: QueryService,
        version: String
    ) -> [UInt8] {
        switch request.split(separator: " ").map(String.init) {
        case ["reload"]:
            switch reloader.reload() {
            case .success(let line): return Array("reloaded: \(line)\n".utf8)
            case .failure(let reason): return Array("refused: \(reason)\n".utf8)
            }
        case ["status"]:
            let announced = announcement.state.map { "announce: \($0)\n" } ?? ""
            let served = query.statusLine.map { "\($0)\n" } ?? ""
            return Array((bridge.status(version: version).text + "\n" + announced + served).utf8)
        default:
            let status = statusJSON(bridge: bridge, announcement: announcement, query: query, version: version)
            return Array((JSONWriter.text(status, pretty: true) + "\n").utf8)
        }
    }

    /// `aseqosc status --json`: the bridge's status with the announcement and OSCQuery's.
    static func statusJSON(
        bridge: Bridge, announcement: InputAnnouncement, query: QueryService, version: String
    ) -> JSONValue {
        var status = (try? JSONValueEncoder.encode(bridge.status(version: version))) ?? .object([:])
        if case .object(var fields) = status {
            if let state = announcement.state { fields["announce"] = .string(state) }
            if let served = query.statusJSON { fields["oscQuery"] = served }
            status = .object(fields)
        }
        return status
    }
}

/// Applies the config file again (SIGHUP or `aseqosc reload`), one reload at a time: a refused
/// config leaves the running one in place and says why.
final class Reloader: Sendable {
    let bridge: Bridge
    let configPath: String
    let log: Logger
    let notifier: ServiceNotifier
    let announcement: InputAnnouncement
    let query: QueryService
    private let lock = Mutex(())

    init(
        bridge: Bridge, configPath: String, log: Logger, notifier: ServiceNotifier, announcement: InputAnnouncement,
        query: QueryService
    ) {
        self.bridge = bridge
        self.configPath = configPath
        self.log = log
        self.notifier = notifier
        self.announcement = announcement
        self.query = query
    }

    /// The new status line, or why the config was refused.
    func reload() -> Result<String, ReloadRefused> {
        lock.withLock { _ in
            notifier.notify("RELOADING=1\nMONOTONIC_USEC=\(MonotonicClock.now() / 1000)")
            log.notice("reloading \(configPath)")
            defer { notifier.notify("READY=1\nSTATUS=\(bridge.statusLine)") }
            do {
                let config = try ConfigParser.load(path: configPath)
                try bridge.reload(config)
                announcement.apply(config.oscInput, queryPort: query.apply(config))
                log.notice("reloaded: \(bridge.statusLine)")
                return .success(bridge.statusLine)
            } catch {
                // A config mistake names its file itself; what the system refused does not.
                let reason = (error as? ConfigError).map(\.description) ?? "\(configPath): \(error)"
                log.error("reload refused, the running config stays: \(reason)")
                return .failure(ReloadRefused(reason: reason))
            }
        }
    }
}

/// Why a reload did not happen, as the log and `aseqosc reload` say it.
struct ReloadRefused: Error, CustomStringConvertible {
    var reason: String
    package var description: String { reason }
}

extension Duration {
    /// The duration in whole milliseconds.
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
