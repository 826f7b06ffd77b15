/// `aseqosc reload`: makes the running daemon read its config again and reports whether it took
/// it (the unit's `ExecReload`, so `systemctl reload` fails when the config is refused).
struct ReloadCommand: Command {
    static let name = "reload"
    static let abstract = "Make the running bridge re-read its config; fails if it is refused"
    static let help = """
        usage: aseqosc reload [--instance NAME | --control PATH]

        Asks the running `aseqosc run` to read its config file again, as SIGHUP does, and waits
        for the answer. A valid config is applied without restarting the ALSA client (exit 0,
        its new status on stdout); a refused one leaves the running config in place and the
        reason is printed on stderr (exit 65). `systemctl reload aseqosc` runs this.

        options:
        \(RunningDaemon.optionsHelp)
        """

    var daemon: RunningDaemon

    package init(arguments: inout ArgumentScanner) throws(UsageError) {
        daemon = try RunningDaemon(arguments: &arguments)
        try arguments.finish()
    }

    func run() -> ExitCode {
        let path: String
        let answer: String
        switch daemon.ask("reload") {
        case .success(let reply): (path, answer) = (reply.path, String(decoding: reply.answer, as: UTF8.self))
        case .failure(let failure):
            printError(failure.message)
            return failure.status
        }
        if answer.hasPrefix("reloaded: ") {
            print(answer, terminator: "")
            return .ok
        }
        if answer.hasPrefix("refused: ") {
            printError("reload " + answer.dropLast(answer.hasSuffix("\n") ? 1 : 0))
            return .dataError
        }
        printError("the daemon at \(path) gave no answer to the reload (an older version?); send SIGHUP instead")
        return .software
    }
}
