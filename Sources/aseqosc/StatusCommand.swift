import Bridge
import Foundation

/// `aseqosc status`: asks the running daemon over its control socket.
struct StatusCommand: Command {
    static let name = "status"
    static let abstract = "Show the running bridge's bindings, routes and counters"
    static let help = """
        usage: aseqosc status [--json] [--control PATH]

        Asks the running `aseqosc run` for its state: each binding (spec -> the ALSA port it is
        connected to, or "waiting"), each route and destination with its counters and send
        errors, the ring's high-water mark and drops, the OSC input's counters (packets, drops
        by reason, bundles, and per output port: sent, dropped, queue high water), and the uptime.

        options:
          --json            the daemon's JSON document, for scripts
          --control PATH    the daemon's socket (default: the first of /run/aseqosc/control,
                            $XDG_RUNTIME_DIR/aseqosc.control, /tmp/aseqosc-UID.control that exists)
        """

    var json: Bool
    var controlPath: String?

    init(arguments: inout ArgumentScanner) throws(UsageError) {
        json = arguments.flag("--json")
        controlPath = try arguments.option("--control")
        try arguments.finish()
    }

    func run() -> ExitCode {
        let candidates = controlPath.map { [$0] } ?? ControlSocket.candidatePaths()
        guard let path = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            printError(
                "no running aseqosc found (looked for \(candidates.joined(separator: ", "))); start it with `aseqosc run`"
            )
            return .unavailable
        }
        let data: Data
        do {
            data = try ControlSocket.query(path: path)
        } catch {
            printError("cannot reach the daemon at \(path): \(error)")
            return .unavailable
        }
        if json {
            print(String(decoding: data, as: UTF8.self))
            return .ok
        }
        guard let status = try? JSONDecoder().decode(BridgeStatus.self, from: data) else {
            printError("the daemon at \(path) sent something that is not a status")
            return .software
        }
        print(status.text)
        return .ok
    }
}
