import ALSASequencer
import Bridge
import Dispatch
import Foundation
import Glibc
import Synchronization

/// `aseqosc run`: the daemon. Starts the bridge from a config; SIGHUP reloads it, SIGTERM and
/// SIGINT stop it after sending a note-off for every held note.
struct RunCommand: Command {
    static let name = "run"
    static let abstract = "Run the bridge (the systemd service runs this)"
    static let help = """
        usage: aseqosc run [--config FILE] [--log-level LEVEL] [--control PATH]

        Starts the bridge: ALSA ports and their bindings, routes, OSC destinations.
          SIGHUP           re-reads the config; a broken one is refused and the running one kept;
                           a valid one is applied without restarting the ALSA client, and notes
                           held on removed or changed routes get their note-offs
          SIGTERM, SIGINT  sends a note-off for every held note, then exits 0
        Under systemd (Type=notify) it reports READY, STATUS, RELOADING, STOPPING and watchdog
        pings driven by the pipeline thread's progress.

        options:
          --config FILE        default /etc/aseqosc/aseqosc.json5, else the packaged default
          --log-level LEVEL    error, warning, notice, info (default) or debug
          --control PATH       the status socket (default: $RUNTIME_DIRECTORY/control,
                               else $XDG_RUNTIME_DIR/aseqosc.control, else /tmp/aseqosc-UID.control)
        """

    static let systemConfig = "/etc/aseqosc/aseqosc.json5"

    var configPath: String
    var logLevel: LogLevel
    var controlPath: String

    init(arguments: inout ArgumentScanner) throws(UsageError) {
        if let path = try arguments.option("--config") {
            configPath = path
        } else {
            configPath =
                FileManager.default.fileExists(atPath: Self.systemConfig) ? Self.systemConfig : Self.packagedConfig
        }
        let levelName = try arguments.option("--log-level") ?? "info"
        guard let level = LogLevel(name: levelName) else {
            throw UsageError("unknown log level '\(levelName)'; use error, warning, notice, info or debug")
        }
        logLevel = level
        controlPath = try arguments.option("--control") ?? ControlSocket.defaultPath()
        try arguments.finish()
    }

    /// The default config installed beside the binary (`make install`) or in the source tree.
    static var packagedConfig: String {
        let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let candidates = [
            binary.appendingPathComponent("../share/aseqosc/aseqosc.json5").standardized.path,
            binary.appendingPathComponent("../../Config/aseqosc.json5").standardized.path,
        ]
        return candidates.first { FileManager.default.fileExists(atPath: $0) } ?? "Config/aseqosc.json5"
    }

    func run() -> ExitCode {
        // First of all, so that a signal sent as soon as the bridge says it runs is never lost
        // (or, for SIGHUP, fatal).
        let signals = SignalQueue([SIGTERM, SIGINT, SIGHUP])
        let log = Logger(level: logLevel)
        let notifier = ServiceNotifier()
        let config: BridgeConfig
        do {
            config = try ConfigParser.load(path: configPath)
        } catch {
            log.error("\(configPath): \(error)")
            return .dataError
        }
        log.notice("aseqosc \(Aseqosc.version) starting with \(configPath)")
        // With a watchdog, the pipeline thread wakes at least four times per period even when
        // idle, so its progress counter shows it is alive.
        let idleWake = notifier.watchdogInterval.map { Int32(max(10, min(1000, $0.milliseconds / 4))) } ?? 1000
        let bridge: Bridge
        do {
            bridge = try Bridge(config: config, log: log, idleWakeMilliseconds: idleWake)
        } catch {
            log.error(error.description)
            return .unavailable
        }
        bridge.start()
        let control: ControlSocket?
        do {
            let socket = try ControlSocket(path: controlPath) {
                (try? JSONEncoder.status.encode(bridge.status(version: Aseqosc.version))) ?? Data("{}".utf8)
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

        let timers = Self.startTimers(bridge: bridge, notifier: notifier)
        while true {
            let number = signals.next()
            if number == SIGHUP {
                reload(bridge, log: log, notifier: notifier)
                continue
            }
            break
        }
        notifier.notify("STOPPING=1")
        log.notice("stopping: sending note-offs for held notes")
        for timer in timers { timer.cancel() }
        control?.stop()
        bridge.stop()
        log.notice("stopped: \(bridge.statusLine)")
        return .ok
    }

    private func reload(_ bridge: Bridge, log: Logger, notifier: ServiceNotifier) {
        notifier.notify("RELOADING=1\nMONOTONIC_USEC=\(SequencerReader.now() / 1000)")
        log.notice("reloading \(configPath)")
        do {
            try bridge.reload(try ConfigParser.load(path: configPath))
            log.notice("reloaded: \(bridge.statusLine)")
        } catch {
            log.error("reload refused, the running config stays: \(configPath): \(error)")
        }
        notifier.notify("READY=1\nSTATUS=\(bridge.statusLine)")
    }

    /// Under systemd: status every 2 s; watchdog pings at half the period, only while the
    /// pipeline moves.
    private static func startTimers(bridge: Bridge, notifier: ServiceNotifier) -> [any DispatchSourceTimer] {
        // Both only talk to systemd; without it they would only wake a thread now and then.
        guard notifier.isActive else { return [] }
        let status = DispatchSource.makeTimerSource(queue: .global())
        status.schedule(deadline: .now() + 2, repeating: 2)
        status.setEventHandler { notifier.notify("STATUS=\(bridge.statusLine)") }
        status.resume()
        guard let interval = notifier.watchdogInterval else { return [status] }
        let watchdog = DispatchSource.makeTimerSource(queue: .global())
        let lastProgress = Mutex<UInt64>(.max)
        let half = Double(interval.milliseconds) / 2000
        watchdog.schedule(deadline: .now(), repeating: half)
        watchdog.setEventHandler {
            let progress = bridge.pipelineProgress
            let moved = lastProgress.withLock { last in
                defer { last = progress }
                return last != progress
            }
            if moved { notifier.notify("WATCHDOG=1") }
        }
        watchdog.resume()
        return [status, watchdog]
    }

}

extension Duration {
    /// The duration in whole milliseconds.
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}

extension JSONEncoder {
    /// Status JSON: stable key order, readable.
    static var status: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

/// Turns signals into values a thread can wait for, one at a time and in order.
final class SignalQueue: @unchecked Sendable {
    // @unchecked Sendable: `pending` is guarded by `condition`.
    private let condition = NSCondition()
    private var pending: [Int32] = []
    private var sources: [any DispatchSourceSignal] = []

    init(_ numbers: [Int32]) {
        for number in numbers {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [unowned self] in
                condition.lock()
                pending.append(number)
                condition.signal()
                condition.unlock()
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Waits for the next signal.
    func next() -> Int32 {
        condition.lock()
        defer { condition.unlock() }
        while pending.isEmpty { condition.wait() }
        return pending.removeFirst()
    }
}
