import Bridge
import Platform
import Service

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
                           held on removed or changed routes get their note-offs (`aseqosc reload`
                           does the same and says whether the new config was taken)
          SIGTERM, SIGINT  sends a note-off for every held note, then exits 0
        Under systemd (Type=notify) it reports READY, STATUS, RELOADING, STOPPING and watchdog
        pings driven by the input thread's progress. Exits 65 when the config is refused at
        start, 69 when the sequencer or a needed resource is missing.

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

    package init(arguments: inout ArgumentScanner) throws(UsageError) {
        if let path = try arguments.option("--config") {
            configPath = path
        } else {
            configPath = FileSystem.exists(Self.systemConfig) ? Self.systemConfig : Self.packagedConfig
        }
        let levelName = try arguments.option("--log-level") ?? "info"
        guard let level = LogLevel(name: levelName) else {
            throw UsageError("unknown log level '\(levelName)'; use error, warning, notice, info or debug")
        }
        logLevel = level
        controlPath = try arguments.option("--control") ?? ControlSocket.defaultPath()
        try arguments.finish()
    }

    /// The default config installed beside the binary (`make install`) or in the source tree
    /// (`.build/release/aseqosc`, `.build/static/release/aseqosc`).
    static var packagedConfig: String {
        let folder = FileSystem.resolved("/proc/self/exe").map { String($0[..<($0.lastIndex(of: "/") ?? $0.endIndex)]) }
        let candidates = ["../share/aseqosc", "../../Config", "../../../Config"].compactMap { relative in
            folder.flatMap { FileSystem.resolved("\($0)/\(relative)/aseqosc.json5") }
        }
        return candidates.first ?? "Config/aseqosc.json5"
    }

    func run() -> ExitCode {
        let daemon = Daemon(
            configPath: configPath, logLevel: logLevel, controlPath: controlPath, version: Aseqosc.version)
        switch daemon.run() {
        case .stopped: return .ok
        case .configRefused: return .dataError
        case .unavailable: return .unavailable
        }
    }
}
