import Foundation
import Glibc

/// What a finished process left behind.
package struct ProcessResult: Sendable {
    package var status: Int32
    package var standardOutput: String
    package var standardError: String
    /// Whether the process had to be killed at its deadline.
    package var timedOut: Bool
}

/// Runs a program to completion (or until `timeout`), collecting both output streams.
package func runProcess(
    _ path: String, _ arguments: [String], input: String? = nil, timeout: TimeInterval = 120,
    environment: [String: String]? = nil
) throws -> ProcessResult {
    let process = BackgroundProcess(path, arguments, environment: environment)
    try process.start(input: input)
    return process.wait(timeout: timeout)
}

/// A child process running while the test does something else: `aseqdump`, `oscdump`, or
/// `aseqosc monitor`. Output is collected as it arrives so the test can wait for a line.
///
/// Started with `posix_spawn` and reaped with `waitpid` here, not with Foundation's `Process`:
/// under the ALSA VM's load, `Process` missed children's exits (`isRunning` true for good, its
/// monitor thread stuck in its launch condition), which hung whole test runs.
package final class BackgroundProcess: @unchecked Sendable {
    // @unchecked Sendable: the output buffers and the exit status are guarded by `lock`; the
    // rest is set before `start` returns.
    private let path: String
    private let arguments: [String]
    private let environment: [String: String]?
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()
    private var child: pid_t = 0
    private var exitStatus: Int32?
    private var stdinWriter: Int32 = -1
    /// Signalled by each output reader when its pipe reaches end of file.
    private let readersDone = DispatchSemaphore(value: 0)
    private var readers = 0

    package init(_ path: String, _ arguments: [String], environment: [String: String]? = nil) {
        self.path = path
        self.arguments = arguments
        self.environment = environment
    }

    /// Starts the child; `input`, if given, is written to its stdin, which is then closed.
    package func start(input: String? = nil) throws {
        var stdinPipe: [Int32] = [-1, -1]
        var stdoutPipe: [Int32] = [-1, -1]
        var stderrPipe: [Int32] = [-1, -1]
        guard pipe(&stdinPipe) == 0, pipe(&stdoutPipe) == 0, pipe(&stderrPipe) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        // Not inherited by other children started meanwhile (dup2 clears it on 0, 1 and 2).
        for descriptor in stdinPipe + stdoutPipe + stderrPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
        // The child starts with no signal blocked and every signal at its default, whatever
        // the test's threads block or handle (a SIGTERM must stop an aseqdump).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var variables = ProcessInfo.processInfo.environment
        if let environment { variables.merge(environment) { $1 } }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        close(stdinPipe[0])
        close(stdoutPipe[1])
        close(stderrPipe[1])
        guard result == 0 else {
            for descriptor in [stdinPipe[1], stdoutPipe[0], stderrPipe[0]] { close(descriptor) }
            throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO)
        }
        child = pid
        read(stdoutPipe[0]) { self.out.append($0) }
        read(stderrPipe[0]) { self.err.append($0) }
        stdinWriter = stdinPipe[1]
        if let input {
            let bytes = Array(input.utf8)
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { Glibc.write(stdinWriter, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                written += count
            }
            close(stdinWriter)
            stdinWriter = -1
        }
    }

    /// Reads `descriptor` on a thread of its own until end of file, appending under the lock.
    private func read(_ descriptor: Int32, into append: @escaping @Sendable (Data) -> Void) {
        readers += 1
        let done = readersDone
        Thread { [lock] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                lock.withLock { append(Data(buffer[0..<count])) }
            }
            close(descriptor)
            done.signal()
        }.start()
    }

    /// The process id, for signals.
    package var pid: Int32 { child }

    /// Whether the child is still running (reaps it once it has exited).
    package var isRunning: Bool {
        lock.withLock {
            guard child > 0, exitStatus == nil else { return false }
            var status: Int32 = 0
            guard waitpid(child, &status, WNOHANG) == child else { return true }
            // Foundation's convention: the exit code, or the signal that ended the child.
            exitStatus = status & 0x7F == 0 ? (status >> 8) & 0xFF : status & 0x7F
            return false
        }
    }

    /// Everything the child has written to stdout so far.
    package var standardOutput: String { lock.withLock { String(decoding: out, as: UTF8.self) } }
    /// Everything the child has written to stderr so far.
    package var standardError: String { lock.withLock { String(decoding: err, as: UTF8.self) } }

    /// Waits until stdout satisfies `condition` or `timeout` passes; returns whether it did.
    package func waitForOutput(timeout: TimeInterval = 60, _ condition: (String) -> Bool) -> Bool {
        waitUntil(timeout: timeout) { condition(standardOutput) }
    }

    /// Sends `signal` to the child.
    package func signal(_ signal: Int32) { if isRunning { kill(child, signal) } }

    /// Waits for the child to exit, killing it at `timeout`, and returns what it left.
    package func wait(timeout: TimeInterval = 20) -> ProcessResult {
        let deadline = Date().addingTimeInterval(timeout)
        var timedOut = false
        while isRunning {
            if !timedOut && Date() >= deadline {
                timedOut = true
                kill(child, SIGKILL)
            }
            usleep(2_000)
        }
        // What the child wrote before it ended; a grandchild that kept the pipes open is not
        // waited for beyond a second.
        while readers > 0 {
            guard readersDone.wait(timeout: .now() + 1) == .success else { break }
            readers -= 1
        }
        return ProcessResult(
            status: lock.withLock { exitStatus ?? -1 }, standardOutput: standardOutput,
            standardError: standardError, timedOut: timedOut)
    }

    /// Stops the child with SIGTERM (SIGKILL after `grace`) and returns what it left.
    @discardableResult
    package func stop(grace: TimeInterval = 3) -> ProcessResult {
        signal(SIGTERM)
        return wait(timeout: grace)
    }

    deinit {
        if isRunning {
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        if stdinWriter >= 0 { close(stdinWriter) }
    }
}

/// Polls `condition` every 5 ms until it holds or `timeout` passes; returns whether it held. The
/// default is for what only has to happen: a minute, which an emulated VM on a busy machine
/// needs at worst; a wait whose length is the point says so.
package func waitUntil(timeout: TimeInterval = 60, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}

/// What `/proc/asound/cardC/midiD` says of raw MIDI device `device`'s (`"hw:C,D"`) input: the
/// process that has it open and the bytes waiting to be read; nil while nobody has it open.
func rawMIDIInput(_ device: String) -> (owner: Int32, waiting: Int)? {
    let numbers = device.dropFirst("hw:".count).split(separator: ",")
    guard numbers.count == 2,
        let text = try? String(contentsOfFile: "/proc/asound/card\(numbers[0])/midi\(numbers[1])", encoding: .utf8),
        let input = text.range(of: "\nInput")
    else { return nil }
    var fields: [String: Int] = [:]
    for line in text[input.upperBound...].split(separator: "\n") {
        let parts = line.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let value = Int(parts[1].trimmingCharacters(in: .whitespaces)) else { continue }
        fields[parts[0].trimmingCharacters(in: .whitespaces)] = value
    }
    guard let owner = fields["Owner PID"] else { return nil }
    return (Int32(owner), fields["Avail"] ?? 0)
}

/// Whether process `pid` is waiting in `poll` (or `ppoll`), as `amidi -d` does between reads.
func isWaitingInPoll(_ pid: Int32) -> Bool {
    #if arch(x86_64)
        let polls = ["7", "271"]
    #else
        let polls = ["73"]
    #endif
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8),
        let number = text.split(separator: " ").first
    else { return false }
    return polls.contains(String(number))
}

/// Waits until a reader of ALSA raw MIDI device `device` (`"hw:C,D"`), `amidi -d`, listens: it
/// has the device open for input (the kernel lists its PID under the input substream in
/// `/proc/asound/cardC/midiD`) and waits in `poll`, so it has made the read that starts a virmidi
/// device's input (bytes sent before that read are not passed on).
package func waitForRawMIDIReader(_ device: String, timeout: TimeInterval = 60) -> Bool {
    waitUntil(timeout: timeout) { rawMIDIInput(device).map { isWaitingInPoll($0.owner) } ?? false }
}

/// Ends `amidi -d` (`dump`) reading raw MIDI device `device` once it has read and printed all the
/// kernel holds for it (nothing waiting, the reader back in `poll`: it prints each read before
/// the next), with SIGINT, which it takes as the end; returns what it left. For a dump whose
/// bytes were all sent by now.
package func stopRawMIDIDump(_ dump: BackgroundProcess, device: String, timeout: TimeInterval = 60) -> ProcessResult {
    _ = waitUntil(timeout: timeout) {
        rawMIDIInput(device).map { $0.waiting == 0 && isWaitingInPoll($0.owner) } ?? true
    }
    dump.signal(SIGINT)
    return dump.wait(timeout: timeout)
}

/// The first python3 on PATH (then /usr/bin's) that imports `modules` (`"websockets, pythonosc"`),
/// resolved to its interpreter: pip's is often pyenv's, whose shim costs seconds a start under
/// emulation. Nil when none does.
package func python3(importing modules: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    for folder in path.split(separator: ":").map(String.init) + ["/usr/bin"] {
        let candidate = folder + "/python3"
        // A generous limit: an emulated VM on a busy machine can take half a minute to start
        // python and import a package over its shared file system; a missing module is quick.
        guard access(candidate, X_OK) == 0,
            let found = try? runProcess(
                candidate, ["-c", "import sys, \(modules); print(sys.executable)"], timeout: 300),
            found.status == 0
        else { continue }
        return found.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }
    return nil
}
