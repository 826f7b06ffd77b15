import Platform
import Service

/// Finds the control socket of a running `aseqosc run` for `status` and `reload`: the one
/// named with `--control` or `--instance`, else the only one running.
struct RunningDaemon {
    static let optionsHelp = """
          --instance NAME   the systemd instance aseqosc@NAME (its socket /run/aseqosc-NAME/control)
          --control PATH    the daemon's socket; without either option, $RUNTIME_DIRECTORY/control
                            when set (a unit's own instance), else the one daemon running
                            (systemd's /run/aseqosc/control and /run/aseqosc-*/control,
                            $XDG_RUNTIME_DIR/aseqosc.control, /tmp/aseqosc-UID.control)
        """

    var controlPath: String?

    package init(arguments: inout ArgumentScanner) throws(UsageError) {
        let control = try arguments.option("--control")
        let instance = try arguments.option("--instance")
        if control != nil && instance != nil {
            throw UsageError("--control and --instance name the same thing; give one")
        }
        controlPath = control ?? instance.map(ControlSocket.instancePath)
    }

    /// The socket to talk to, or the message and exit status that say why there is none.
    func locate() -> Result<String, Failure> {
        if let controlPath {
            guard ControlSocket.isLive(controlPath) else {
                return .failure(Failure(message: "no aseqosc answers on \(controlPath)", status: .unavailable))
            }
            return .success(controlPath)
        }
        // Run by a unit (its ExecReload): the daemon is the unit's own, in its runtime directory.
        if let runtime = ProcessEnvironment.current["RUNTIME_DIRECTORY"], !runtime.isEmpty {
            let own = ControlSocket.defaultPath()
            guard ControlSocket.isLive(own) else {
                let message = "no aseqosc answers on \(own) (RUNTIME_DIRECTORY=\(runtime))"
                return .failure(Failure(message: message, status: .unavailable))
            }
            return .success(own)
        }
        let candidates = ControlSocket.candidatePaths()
        let live = candidates.filter(ControlSocket.isLive)
        switch live.count {
        case 0:
            return .failure(
                Failure(
                    message: "no running aseqosc found (looked for \(candidates.joined(separator: ", "))); "
                        + "start it with `aseqosc run` or `systemctl start aseqosc`",
                    status: .unavailable))
        case 1:
            return .success(live[0])
        default:
            let list = live.map { path in
                switch ControlSocket.instanceName(of: path) {
                case "": "  aseqosc.service           --instance aseqosc  (\(path))"
                case let name?: "  aseqosc@\(name).service   --instance \(name)  (\(path))"
                case nil: "  --control \(path)"
                }
            }
            let message = "\(live.count) aseqosc instances are running; choose one:\n" + list.joined(separator: "\n")
            return .failure(Failure(message: message, status: .usage))
        }
    }

    /// Sends `request` to the daemon `locate()` finds and returns its socket and answer, or why
    /// there is none.
    func ask(_ request: String) -> Result<(path: String, answer: [UInt8]), Failure> {
        let path: String
        switch locate() {
        case .success(let found): path = found
        case .failure(let failure): return .failure(failure)
        }
        do {
            return .success((path, try ControlSocket.query(path: path, request: request)))
        } catch {
            return .failure(Failure(message: "cannot reach the daemon at \(path): \(error)", status: .unavailable))
        }
    }

    struct Failure: Error {
        package var message: String
        var status: ExitCode
    }
}
