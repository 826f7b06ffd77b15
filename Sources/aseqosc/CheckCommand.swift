import Config

/// `aseqosc check FILE`: validates a config without starting anything.
struct CheckCommand: Command {
    static let name = "check"
    static let abstract = "Validate a config file and print what it sets up"
    static let help = """
        usage: aseqosc check FILE

        Reads FILE (JSON5), checks every setting, and prints the ports and routes it sets up.
        A mistake is reported with its key path and what was expected, for example
          routes[1].destinations[0].port: expected 1-65535, found 70000
        and the exit status is 65. Nothing touches ALSA or the network.
        """

    var path: String

    package init(arguments: inout ArgumentScanner) throws(UsageError) {
        let words = try arguments.positionals()
        guard words.count == 1 else {
            throw UsageError(words.isEmpty ? "a config file is needed" : "one config file at a time")
        }
        path = words[0]
    }

    func run() -> ExitCode {
        do {
            let config = try ConfigParser.load(path: path)
            print(config.summary)
            print("\(path): ok")
            return .ok
        } catch {
            printError(error.description)
            return .dataError
        }
    }
}
