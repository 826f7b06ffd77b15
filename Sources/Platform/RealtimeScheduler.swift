import CAffinity
import Glibc
import Synchronization

/// One of the bridge's threads that may run real-time.
package enum RealtimeRole: Int, CaseIterable, Sendable, CustomStringConvertible {
    /// The ALSA input thread (`aseqosc-input`).
    case input
    /// The OSC -> MIDI thread (`aseqosc-osc-in`).
    case osc
    /// A TCP destination's connection thread (`aseqosc-tcp`), one per destination.
    case tcp

    package var description: String {
        switch self {
        case .input: "input"
        case .osc: "osc"
        case .tcp: "tcp"
        }
    }
}

/// How one thread ended up scheduled.
package struct ThreadSchedule: Codable, Sendable, Equatable {
    /// `fifo` (SCHED_FIFO) or `other` (the normal time-sharing policy).
    var policy: String
    /// The SCHED_FIFO priority; 0 under `other`.
    var priority: Int
    /// Why SCHED_FIFO was not taken, when it was asked for (`EPERM`).
    var refused: String?
    /// The one CPU the thread is kept on, if it is kept on one.
    var cpu: Int?

    package init(policy: String, priority: Int, refused: String? = nil, cpu: Int? = nil) {
        self.policy = policy
        self.priority = priority
        self.refused = refused
        self.cpu = cpu
    }

    /// `fifo/4`, `other`, `other (SCHED_FIFO refused: EPERM)`, then ` on CPU 1` when kept on one.
    package var text: String {
        let placement = cpu.map { " on CPU \($0)" } ?? ""
        if policy == "fifo" { return "fifo/\(priority)" + placement }
        return (refused.map { "\(policy) (SCHED_FIFO refused: \($0))" } ?? policy) + placement
    }
}

/// Puts the bridge's event threads under SCHED_FIFO and locks the process's memory, where the
/// system allows it, and records what each thread got. Where it is refused, the bridge runs at
/// normal priority and the log says once, for the whole process, why and how to allow it.
package final class RealtimeScheduler: Sendable {
    /// The SCHED_FIFO priority asked for; nil runs every thread at normal priority.
    package let priority: Int?
    /// Whether `mlockall` is asked for (only with a priority: locking is for the threads'
    /// sake, so that an event never waits for a page to be read back in).
    let lockMemory: Bool
    private let log: Logger
    private let state = Mutex(State())

    private struct State {
        var threads: [RealtimeRole: ThreadSchedule] = [:]
        var memoryLocked = false
        var memoryRefused: String?
        var prepared = false
        var reported = false
        /// The CPU the input thread is kept on as it starts; nil: any.
        var sendingCPU: Int?
    }

    /// Asks for SCHED_FIFO at `priority` (1-99; nil: normal priority) and, with it, locked memory.
    package init(priority: Int?, lockMemory: Bool, log: Logger) {
        self.priority = priority
        self.lockMemory = priority != nil && lockMemory
        self.log = log
    }

    /// Before the threads start, on the thread that starts them: locks memory, and finds out
    /// whether SCHED_FIFO will be granted, so that one log line can tell both refusals. Once.
    package func prepare() {
        guard let priority else { return }
        let alreadyPrepared = state.withLock { state in
            defer { state.prepared = true }
            return state.prepared
        }
        guard !alreadyPrepared else { return }
        let memory = lockMemory ? Self.lockAllMemory() : nil
        state.withLock { state in
            state.memoryLocked = lockMemory && memory == nil
            state.memoryRefused = memory
        }
        let fifo = Self.probe(priority: Int32(priority))
        report(fifoRefused: fifo, memoryRefused: memory)
    }

    /// Keeps the input thread on `cpu` (nil: any CPU) from their next start on
    /// (see `SendingCPU` in the config for why). Set before the threads start.
    package func keepSendingThreads(on cpu: Int?) {
        state.withLock { $0.sendingCPU = cpu }
    }

    /// The CPU the input thread is kept on from its next start, if any.
    package var sendingCPU: Int? { state.withLock { $0.sendingCPU } }

    /// The highest CPU this process may run on (what taskset, `CPUAffinity=` or a cgroup left
    /// it), or nil if the kernel does not say.
    package static var highestAllowedCPU: Int? {
        let cpu = aseqosc_highest_allowed_cpu()
        return cpu >= 0 ? Int(cpu) : nil
    }

    /// Whether this process may run on `cpu`.
    package static func mayRun(on cpu: Int) -> Bool {
        aseqosc_cpu_allowed(Int32(clamping: cpu)) == 1
    }

    /// On the thread itself, first thing: SCHED_FIFO at ``priority``, or normal priority if it
    /// is refused (or not asked for), and for the input thread the CPU of
    /// ``keepSendingThreads(on:)``; the outcome shows in ``schedules``.
    package func enter(_ role: RealtimeRole) {
        var schedule = ThreadSchedule(policy: "other", priority: 0)
        // Only the threads that send datagrams: a TCP stream keeps its order whatever CPU sends.
        if role == .input, let cpu = sendingCPU {
            let result = aseqosc_pin_thread(Int32(clamping: cpu))
            if result == 0 {
                schedule.cpu = cpu
            } else {
                log.warning("cannot keep the \(role) thread on CPU \(cpu): \(Errno(result).name)")
            }
        }
        if let priority {
            var parameters = sched_param(sched_priority: Int32(priority))
            let result = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters)
            if result == 0 {
                schedule.policy = "fifo"
                schedule.priority = priority
            } else {
                schedule.refused = Errno(result).name
                report(fifoRefused: Errno(result), memoryRefused: nil)
            }
        }
        state.withLock { $0.threads[role] = schedule }
    }

    /// What each thread that has started got, by role.
    package var schedules: [RealtimeRole: ThreadSchedule] { state.withLock { $0.threads } }

    /// Whether the process's memory is locked, and if it was asked for and refused, why.
    package var memory: (locked: Bool, refused: String?) {
        state.withLock { ($0.memoryLocked, $0.memoryRefused) }
    }

    /// One warning for the whole process, the first time anything is refused.
    private func report(fifoRefused: Errno?, memoryRefused: String?) {
        guard fifoRefused != nil || memoryRefused != nil, let priority else { return }
        let first = state.withLock { state in
            defer { state.reported = true }
            return !state.reported
        }
        guard first else { return }
        var parts: [String] = []
        if let fifoRefused {
            parts.append(
                "SCHED_FIFO \(priority) refused (\(fifoRefused.name): \(Self.rtprioLimitText(priority))), "
                    + "the threads run at normal priority")
        }
        if let memoryRefused { parts.append("memory not locked (\(memoryRefused))") }
        log.warning(
            "realtime: " + parts.joined(separator: "; ")
                + "; to allow it: LimitRTPRIO=\(priority) and LimitMEMLOCK=infinity in the unit (the packaged "
                + "units have them), or for a user an 'rtprio \(priority)' and 'memlock unlimited' line in "
                + "/etc/security/limits.d (as the audio group gets for JACK); `realtime: false` in the config "
                + "turns this off")
    }

    /// What RLIMIT_RTPRIO allows, for the refusal's log line: below `priority`, it is the reason;
    /// at or above it, something else refused (systemd's `RestrictRealtime=`, a seccomp filter).
    private static func rtprioLimitText(_ priority: Int) -> String {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(__RLIMIT_RTPRIO.rawValue), &limit) == 0 else {
            return "RLIMIT_RTPRIO unknown"
        }
        // rlim_t.max is RLIM_INFINITY.
        let text = limit.rlim_cur == rlim_t.max ? "unlimited" : "\(limit.rlim_cur)"
        guard limit.rlim_cur >= priority else { return "RLIMIT_RTPRIO is \(text)" }
        return "RLIMIT_RTPRIO is \(text), so RestrictRealtime= or a system call filter refused it"
    }

    /// Tries SCHED_FIFO on the calling thread and puts it back: whether the threads will get it.
    /// The calling thread is the one that starts them, which must not pass the policy on.
    private static func probe(priority: Int32) -> Errno? {
        var old = sched_param()
        var oldPolicy: Int32 = 0
        pthread_getschedparam(pthread_self(), &oldPolicy, &old)
        var parameters = sched_param(sched_priority: priority)
        let result = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters)
        guard result == 0 else { return Errno(result) }
        pthread_setschedparam(pthread_self(), oldPolicy, &old)
        return nil
    }

    /// `mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)`: pages stay in memory once touched,
    /// and nothing is read in ahead (the threads' 8 MB stacks stay as small as they are used).
    /// Returns why it was refused, or nil.
    ///
    /// The kernel refuses MCL_CURRENT when the whole address space exceeds RLIMIT_MEMLOCK, and
    /// afterwards fails any mapping beyond it (a new thread's stack, a malloc arena), so under a
    /// finite limit without CAP_IPC_LOCK it is not even tried.
    private static func lockAllMemory() -> String? {
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(__RLIMIT_MEMLOCK.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max,
            !hasCapability(ipcLock)
        {
            return "RLIMIT_MEMLOCK is \(limit.rlim_cur / 1024) KiB; locking needs it unlimited"
        }
        // MCL_ONFAULT (Linux 4.4) is 4; the Glibc module does not export it.
        let onFault: Int32 = 4
        guard mlockall(MCL_CURRENT | MCL_FUTURE | onFault) == 0 else {
            return "mlockall: \(Errno.current.name)"
        }
        return nil
    }

    /// CAP_IPC_LOCK, whose holder may lock any amount of memory.
    private static let ipcLock = 14

    /// Whether the process's effective capabilities (`CapEff` in /proc/self/status) hold `bit`.
    private static func hasCapability(_ bit: Int) -> Bool {
        guard let bytes = try? FileSystem.contents(of: "/proc/self/status") else { return false }
        // In bytes: split into Characters, the file's 50 lines cost half a million instructions.
        let label = Array("CapEff:".utf8)
        guard let line = bytes.split(separator: UInt8(ascii: "\n")).first(where: { $0.starts(with: label) }),
            let mask = UInt64(
                String(
                    decoding: line.dropFirst(label.count).drop(while: {
                        $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: " ")
                    }),
                    as: UTF8.self),
                radix: 16)
        else { return false }
        return mask & (1 << UInt64(bit)) != 0
    }
}
