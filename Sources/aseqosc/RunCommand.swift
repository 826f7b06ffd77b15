import Bridge
import Dispatch
import Foundation
import Glibc

/// `aseqosc run`: the daemon. Starts the bridge from a config and runs until SIGTERM or SIGINT.
struct RunCommand: Command {
    static let name = "run"
    static let abstract = "Run the bridge (the systemd service runs this)"
    static let help = """
        usage: aseqosc run [--config FILE] [--log-level LEVEL]

        Starts the bridge: ALSA ports and their bindings, routes, OSC destinations. Runs until
        SIGTERM or SIGINT, then sends a note-off for every held note and exits 0.

        options:
          --config FILE        default /etc/aseqosc/aseqosc.json5, else the packaged default
          --log-level LEVEL    error, warning, notice, info (default) or debug
        """

    static let systemConfig = "/etc/aseqosc/aseqosc.json5"

    var configPath: String
    var logLevel: LogLevel

    init(arguments: inout ArgumentScanner) throws(UsageError) {
        if let path = try arguments.option("--config") {
            configPath = path
        } else {
            configPath = FileManager.default.fileExists(atPath: Self.systemConfig) ? Self.systemConfig : Self.packagedConfig
        }
        let levelName = try arguments.option("--log-level") ?? "info"
        guard let level = LogLevel(name: levelName) else {
            throw UsageError("unknown log level '\(levelName)'; use error, warning, notice, info or debug")
        }
        logLevel = level
        try arguments.finish()
    }

    /// The default config installed beside the binary (`make install`) or in the source tree.
    static var packagedConfig: String {
        let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let candidates = [
            binary.deletingLastPathComponent().appendingPathComponent("../share/aseqosc/aseqosc.json5").path,
            binary.deletingLastPathComponent().appendingPathComponent("../../Config/aseqosc.json5").path,
        ]
        return candidates.first { FileManager.default.fileExists(atPath: $0) } ?? "Config/aseqosc.json5"
    }

    func run() -> ExitCode {
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
        let bridge: Bridge
        do {
            bridge = try Bridge(config: config, log: log)
        } catch {
            log.error(error.description)
            return .unavailable
        }
        bridge.start()
        notifier.notify("READY=1\nSTATUS=\(bridge.statusLine)")
        log.notice("running: \(bridge.statusLine)")

        let stop = DispatchSemaphore(value: 0)
        let signals = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }
        let statusTimer = DispatchSource.makeTimerSource(queue: .global())
        statusTimer.schedule(deadline: .now() + 2, repeating: 2)
        statusTimer.setEventHandler { notifier.notify("STATUS=\(bridge.statusLine)") }
        statusTimer.resume()

        stop.wait()
        notifier.notify("STOPPING=1")
        log.notice("stopping: sending note-offs for held notes")
        bridge.stop()
        statusTimer.cancel()
        withExtendedLifetime(signals) {}
        log.notice("stopped: \(bridge.statusLine)")
        return .ok
    }
}
