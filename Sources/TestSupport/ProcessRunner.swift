import Foundation

/// What a finished process left behind.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var standardOutput: String
    public var standardError: String
    /// Whether the process had to be killed at its deadline.
    public var timedOut: Bool
}

/// Runs a program to completion (or until `timeout`), collecting both output streams.
public func runProcess(
    _ path: String, _ arguments: [String], input: String? = nil, timeout: TimeInterval = 20,
    environment: [String: String]? = nil
) throws -> ProcessResult {
    let process = BackgroundProcess(path, arguments, environment: environment)
    try process.start(input: input)
    return process.wait(timeout: timeout)
}

/// A child process running while the test does something else: `aseqdump`, `oscdump`, or
/// `aseqosc monitor`. Output is collected as it arrives so the test can wait for a line.
public final class BackgroundProcess: @unchecked Sendable {
    // @unchecked Sendable: the output buffers are guarded by `lock`; the rest is set before start.
    private let process = Process()
    private let outPipe = Pipe()
    private let errPipe = Pipe()
    private let inPipe = Pipe()
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()

    public init(_ path: String, _ arguments: [String], environment: [String: String]? = nil) {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = inPipe
    }

    /// Starts the child; `input`, if given, is written to its stdin, which is then closed.
    public func start(input: String? = nil) throws {
        outPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else { return }
            self.lock.withLock { self.out.append(data) }
        }
        errPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else { return }
            self.lock.withLock { self.err.append(data) }
        }
        try process.run()
        if let input {
            inPipe.fileHandleForWriting.write(Data(input.utf8))
            try? inPipe.fileHandleForWriting.close()
        }
    }

    /// The process id, for signals.
    public var pid: Int32 { process.processIdentifier }

    /// Whether the child is still running.
    public var isRunning: Bool { process.isRunning }

    /// Everything the child has written to stdout so far.
    public var standardOutput: String { lock.withLock { String(decoding: out, as: UTF8.self) } }
    /// Everything the child has written to stderr so far.
    public var standardError: String { lock.withLock { String(decoding: err, as: UTF8.self) } }

    /// Waits until stdout satisfies `condition` or `timeout` passes; returns whether it did.
    @discardableResult
    public func waitForOutput(timeout: TimeInterval = 10, _ condition: (String) -> Bool) -> Bool {
        waitUntil(timeout: timeout) { condition(standardOutput) }
    }

    /// Sends `signal` to the child.
    public func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits for the child to exit, killing it at `timeout`, and returns what it left.
    public func wait(timeout: TimeInterval = 20) -> ProcessResult {
        let deadline = Date().addingTimeInterval(timeout)
        var timedOut = false
        var exitedStatus: Int32?
        var zombieSince: Date?
        while process.isRunning {
            if !timedOut && Date() >= deadline {
                timedOut = true
                kill(process.processIdentifier, SIGKILL)
            }
            // Foundation can miss a child's exit (seen in the ALSA VM: the child a zombie and
            // `isRunning` true for good, so `waitUntilExit()` never returned). A zombie it has
            // not reaped within a second is taken as ended, with the status the kernel keeps
            // for it; it is not reaped here, as Foundation's own wait would then fail.
            if let status = zombieExitStatus {
                zombieSince = zombieSince ?? Date()
                if Date().timeIntervalSince(zombieSince!) > 1 {
                    exitedStatus = status
                    break
                }
            }
            usleep(2_000)
        }
        // Drain what the handlers have not picked up yet.
        outPipe.fileHandleForReading.readabilityHandler = nil
        errPipe.fileHandleForReading.readabilityHandler = nil
        let restOut = (try? outPipe.fileHandleForReading.readToEnd()) ?? nil
        let restErr = (try? errPipe.fileHandleForReading.readToEnd()) ?? nil
        lock.withLock {
            if let restOut { out.append(restOut) }
            if let restErr { err.append(restErr) }
        }
        return ProcessResult(
            status: exitedStatus ?? process.terminationStatus, standardOutput: standardOutput,
            standardError: standardError, timedOut: timedOut)
    }

    /// The exit status of a child that has exited and not been reaped (state `Z` in
    /// `/proc/PID/stat`, whose 52nd field is its status as `waitpid` would report it), as
    /// Foundation reports it: the exit code, or the signal; nil while it runs.
    private var zombieExitStatus: Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // After "pid (comm)": field 3, the state, then fields 4...52.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.first == "Z", fields.count >= 50, let status = Int32(fields[49].trimmingCharacters(in: .whitespacesAndNewlines))
        else { return nil }
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : status & 0x7F
    }

    /// Stops the child with SIGTERM (SIGKILL after `grace`) and returns what it left.
    @discardableResult
    public func stop(grace: TimeInterval = 3) -> ProcessResult {
        if process.isRunning { signal(SIGTERM) }
        return wait(timeout: grace)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// Polls `condition` every 5 ms until it holds or `timeout` passes; returns whether it held.
public func waitUntil(timeout: TimeInterval = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}

/// Waits until some process has ALSA raw MIDI device `device` (`"hw:C,D"`) open for input: the
/// kernel lists an owner under its input substream in `/proc/asound/cardC/midiD` only then, so
/// bytes sent afterwards cannot reach the device before its reader (`amidi -d`) listens.
public func waitForRawMIDIReader(_ device: String, timeout: TimeInterval = 10) -> Bool {
    let numbers = device.dropFirst("hw:".count).split(separator: ",")
    guard numbers.count == 2 else { return false }
    let path = "/proc/asound/card\(numbers[0])/midi\(numbers[1])"
    return waitUntil(timeout: timeout) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let input = text.range(of: "Input")
        else { return false }
        return text[input.upperBound...].contains("Owner PID")
    }
}
