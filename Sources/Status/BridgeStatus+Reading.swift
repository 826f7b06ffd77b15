import ALSASequencer
import MIDI
import MIDIToOSCRuntime
import OSC
import OSCToMIDIRuntime
import OSCTransport
import Pipeline
import Platform

extension BridgeStatus {
    /// The status of the running parts, read from counters their threads update.
    package init(
        version: String, client: String, uptimeSeconds: Double, input: MIDIInputSide,
        routes: [RouteRuntime], sysexStore: SysExStore, oscInput: OSCToMIDISide?,
        realtime: RealtimeScheduler? = nil
    ) {
        let bindings = input.session.bindings.snapshot.map { binding in
            let name =
                binding.direction == .source
                ? input.portName(binding.ourPort) : oscInput?.outputName(ofPort: binding.ourPort)
            return BridgeStatus.Binding(
                port: name ?? "port \(binding.ourPort)",
                direction: binding.direction == .source ? "in" : "out", spec: binding.spec.description,
                connected: binding.connected.map { "\($0.address) \($0.clientName):\($0.portName)" },
                waiting: binding.connected.isEmpty ? binding.waitingReason : nil)
        }
        let now = MonotonicClock.now()
        let seconds = { (time: UInt64) in Double(now &- min(time, now)) / 1e9 }
        self.init(
            version: version, client: client, uptimeSeconds: uptimeSeconds,
            bindings: bindings,
            routes: routes.map { runtime in
                let counts = runtime.route.counters.snapshot
                return BridgeStatus.Route(
                    name: runtime.config.name, eventsIn: counts.eventsIn, passed: counts.passed,
                    droppedByFilter: counts.droppedByFilter, droppedOutOfRange: counts.droppedOutOfRange,
                    throttled: counts.throttled,
                    destinations: runtime.resolved.indices.map { index in
                        let counters = runtime.sending.sender.statistics.counters(for: index)
                        let announcer = runtime.recovery?.announcers[index]
                        let link = runtime.sending.sender.links[index]
                        let linkCounters = link?.counters
                        var refused: (since: Double, through: Double?)?
                        if link == nil, case .refused(let since, let through) = counters.reach {
                            refused = (seconds(since), through.map(seconds))
                        }
                        return BridgeStatus.Destination(
                            address: runtime.resolved[index].destination.description,
                            scheme: runtime.destinations[index].sends,
                            packetsSent: linkCounters?.packetsSent ?? counters.packetsSent,
                            bytesSent: linkCounters?.bytesSent ?? counters.bytesSent,
                            errors: Dictionary(
                                uniqueKeysWithValues: counters.errors.filter { $0.value > 0 }.map {
                                    ("\($0.key)", $0.value)
                                }), recovery: announcer?.mode.rawValue,
                            recoverySent: announcer?.sentCount.load(ordering: .relaxed) ?? 0,
                            latencyMilliseconds: runtime.destinations[index].latencyMilliseconds,
                            refusedSeconds: refused?.since, lastThroughSeconds: refused?.through,
                            tcp: link.map { TCPDestination($0.counters, framing: $0.framing) },
                            serviceAt: runtime.sending.sender.serviceTargets[index].map {
                                $0.current?.description ?? "absent"
                            },
                            sync: runtime.destinations[index].sync.isEmpty
                                ? nil : runtime.destinations[index].sync.description,
                            replayed: runtime.replays.stores[index]?.replayed ?? 0)
                    })
            },
            eventsIn: input.runner.eventsIn.load(ordering: .relaxed), inputOverruns: input.reader.overruns,
            notesEndedAfterOverrun: input.runner.notesEndedAfterOverrun.load(ordering: .relaxed),
            sysexDropped: sysexStore.droppedCount, unsentEvents: input.runner.unformatted.load(ordering: .relaxed),
            replaysRefused: input.runner.replaySignal.refused.load(ordering: .relaxed)
                + (oscInput?.replays.refused.load(ordering: .relaxed) ?? 0),
            oscInput: oscInput.map(OSCInput.init), realtime: realtime.map { Realtime($0, osc: oscInput != nil) })
    }
}

extension BridgeStatus.Realtime {
    /// What `scheduler` recorded of the threads that run (the OSC thread only with an OSC input).
    package init(_ scheduler: RealtimeScheduler, osc: Bool) {
        let schedules = scheduler.schedules
        let memory = scheduler.memory
        self.init(
            requestedPriority: scheduler.priority,
            threads: RealtimeRole.allCases.filter { $0 != .osc || osc }.compactMap { role in
                schedules[role].map { Thread(name: "\(role)", schedule: $0) }
            }, memoryLocked: memory.locked, memoryRefused: memory.refused)
    }
}

extension BridgeStatus.OSCTCPInput {
    package init(_ statistics: TCPReceiveStatistics) {
        let framing = statistics.framingErrors
        let reasons = [
            ("unknownFraming", framing.unknownFraming), ("badLength", framing.badLength),
            ("oversized", framing.oversized), ("badEscape", framing.badEscape), ("truncated", framing.truncated),
        ]
        self.init(
            packets: statistics.packets, bytes: statistics.bytes, accepted: statistics.accepted,
            open: statistics.open, closed: statistics.closed, refusedNotAllowed: statistics.refusedNotAllowed,
            refusedTooMany: statistics.refusedTooMany, evictedIdle: statistics.evictedIdle,
            partialFrameTimeouts: statistics.partialFrameTimeouts,
            framingErrors: Dictionary(uniqueKeysWithValues: reasons.filter { $0.1 > 0 }))
    }
}
