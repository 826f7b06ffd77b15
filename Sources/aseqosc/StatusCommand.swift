/// `aseqosc status`: asks the running daemon over its control socket.
struct StatusCommand: Command {
    static let name = "status"
    static let abstract = "Show the running bridge's bindings, routes and counters"
    static let help = """
        usage: aseqosc status [--json] [--instance NAME | --control PATH]

        Asks the running `aseqosc run` for its state: each binding (spec -> the ALSA port it is
        connected to, or "waiting"), each route and destination with its counters and send
        errors, the input overruns (the kernel's queue for us overflowed) and the notes they
        ended, the OSC input's counters (packets, drops by reason, bundles, and per output port:
        sent, dropped, queue high water), and the uptime.
        When several instances run, lists them (exit 64) so one can be chosen.

        options:
          --json            the daemon's JSON document, for scripts
        \(RunningDaemon.optionsHelp)
        """

    var json: Bool
    var daemon: RunningDaemon

    package init(arguments: inout ArgumentScanner) throws(UsageError) {
        json = arguments.flag("--json")
        daemon = try RunningDaemon(arguments: &arguments)
        try arguments.finish()
    }

    func run() -> ExitCode {
        let path: String
        let answer: [UInt8]
        switch daemon.ask(json ? "status json" : "status") {
        case .success(let reply): (path, answer) = reply
        case .failure(let failure):
            printError(failure.message)
            return failure.status
        }
        guard !answer.isEmpty else {
            printError("the daemon at \(path) closed without an answer")
            return .software
        }
        print(String(decoding: answer, as: UTF8.self), terminator: "")
        return .ok
    }
}
