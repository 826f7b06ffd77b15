import ALSASequencer
import Endpoints
import MIDI
import Send

/// `aseqosc send`: SendMIDI's commands played straight into an ALSA port, for shell scripts.
struct SendCommand: Command {
    static let name = "send"
    static let abstract = "Send MIDI to an ALSA port from the command line, like SendMIDI"
    static var help: String {
        """
        usage: aseqosc send --to PORTSPEC [--middle-c N] [--file PATH|-] [COMMAND...]

        Plays SendMIDI's commands into an ALSA port and exits once the kernel has them:
          aseqosc send --to KeyStep ch 2 on C4 100 +00.500 off C4
        Every command is read first; if any is wrong, nothing is sent (exit 64). A port that
        does not exist or a missing sequencer exits 69.

        options:
          --to PORTSPEC   the port to play (required; repeat it, or use /regex/ or *, for more):
                          20:0, "Client Name", "Client Name:Port Name", as `aseqosc ports` lists
          --middle-c N    octave of middle C in note names, 3-5 (4: C4 = 60; SendMIDI uses 3)
          --file PATH     read more commands from a file, - for stdin (after the arguments):
                          words split by blanks and lines, "quoted words", # comments

        commands:
        \(SendVerb.helpTable)

        Numbers are decimal unless `hex` is given or they end in H (7FH); M makes one decimal.
        syx and raw bytes are always hex (F0 43 7F); a decimal byte ends in M (127M).
        Long names work too: note-on, control-change, pitch-bend, ... as in SendMIDI.
        Timestamps between commands wait: +SS.MIL or +HH:MM:SS.MIL waits that long,
        HH:MM:SS.MIL waits until that much time has passed since the previous one.
        Bursts to a hardware port are spaced at MIDI wire speed (3125 bytes/s after 2 KiB),
        because the kernel drops what overflows a port's buffer.
        """
    }

    var destinations: [PortSpec] = []
    var file: String?
    var middleCOctave = NoteName.standardMiddleCOctave
    var words: [String]

    package init(arguments: inout ArgumentScanner) throws(UsageError) {
        while let text = try arguments.option("--to") {
            do {
                destinations.append(try PortSpec(parsing: text))
            } catch {
                throw UsageError(error.description)
            }
        }
        file = try arguments.option("--file")
        if let text = try arguments.option("--middle-c") {
            guard let octave = Int(text), SendScript.middleCOctaves.contains(octave) else {
                throw UsageError("--middle-c: '\(text)' is not 3, 4 or 5")
            }
            middleCOctave = octave
        }
        words = arguments.remaining
        arguments = ArgumentScanner([])
        if let option = words.first(where: { $0.hasPrefix("--") }) {
            throw UsageError(
                option == "--"
                    ? "'--': read commands from stdin with --file -" : "unknown option '\(option)'")
        }
        guard !destinations.isEmpty else {
            throw UsageError("--to PORTSPEC is required; ports are listed by `aseqosc ports`")
        }
        guard !words.isEmpty || file != nil else { throw UsageError("no commands given") }
    }

    func run() -> ExitCode {
        var script = SendScript(middleCOctave: middleCOctave)
        script.add(arguments: words)
        if let file {
            do {
                let text = String(decoding: try SendScript.readFile(file), as: UTF8.self)
                script.add(text: text, source: file == "-" ? "stdin" : file)
            } catch {
                printError("send: \(error)")
                return .usage
            }
        }
        guard script.errors.isEmpty else {
            for error in script.errors { printError("send: \(error)") }
            return .usage
        }

        let client: SequencerClient
        let port: UInt8
        var targets: [PortInfo] = []
        do {
            client = try SequencerClient(name: "aseqosc-send")
            port = try client.createPort(name: "send", direction: .output)
            let ports = try client.ports()
            for spec in destinations {
                do {
                    targets += try spec.resolve(in: ports, direction: .destination, excludingClient: client.clientID)
                } catch {
                    printError("send: \(error)")
                    return .unavailable
                }
            }
            // A port named twice is connected once (a few ports: an array, not a set's tables).
            var connected: [PortAddress] = []
            for target in targets where !connected.contains(target.address) {
                try client.connect(from: port, to: target.address)
                connected.append(target.address)
            }
            // Blocking: a full output pool makes us wait instead of losing a command.
            try client.setBlocking(true)
        } catch {
            printError("send: \(error)")
            return .unavailable
        }
        do {
            let player = SendPlayer(client: client, port: port, paced: targets.contains(where: \.isHardware))
            try player.play(script.steps)
            try client.drainOutput()
        } catch {
            printError("send: \(error)")
            return .ioError
        }
        return .ok
    }
}
