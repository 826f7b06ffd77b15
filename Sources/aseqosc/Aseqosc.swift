import Glibc

/// The `aseqosc` executable: finds the subcommand and hands it the rest of the command line.
@main
enum Aseqosc {
    /// The version `aseqosc --version` prints.
    static let version = packageVersion

    /// Every subcommand, in the order `aseqosc --help` lists them.
    static var commands: [any Command.Type] {
        [
            RunCommand.self, StatusCommand.self, ReloadCommand.self, PortsCommand.self, MonitorCommand.self,
            SendCommand.self, CheckCommand.self, BrowseCommand.self,
        ]
    }

    static func main() {
        exit(run(Array(CommandLine.arguments.dropFirst())).rawValue)
    }

    static var help: String {
        let width = commands.map { $0.name.count }.max() ?? 0
        let list = commands.map { "  " + $0.name.padding(width) + "  " + $0.abstract }.joined(separator: "\n")
        return """
            aseqosc \(version): a bridge between the ALSA MIDI sequencer and OSC

            usage: aseqosc <command> [options]

            commands:
            \(list)

            `aseqosc <command> --help` explains one command.
            """
    }

    static func run(_ arguments: [String]) -> ExitCode {
        guard let first = arguments.first else {
            printError("no command given\n\n" + help)
            return .usage
        }
        switch first {
        case "--help", "-h", "help":
            print(help)
            return .ok
        case "--version", "-V":
            print("aseqosc \(version)")
            return .ok
        default:
            break
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            printError("unknown command '\(first)'; `aseqosc --help` lists the commands")
            return .usage
        }
        var scanner = ArgumentScanner(Array(arguments.dropFirst()))
        if scanner.flag("--help", "-h") {
            print(command.help)
            return .ok
        }
        do {
            return try command.init(arguments: &scanner).run()
        } catch {
            let usageLine = command.help.split(separator: "\n").first.map(String.init) ?? ""
            printError("\(command.name): \(error.description)\n\(usageLine)")
            return .usage
        }
    }
}
