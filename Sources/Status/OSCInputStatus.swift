import MIDI
import OSCToMIDIRuntime
import Storage
import Synchronization

extension BridgeStatus.OSCInput {
    /// The counters of `side`, for `status` (any thread).
    package init(_ side: OSCToMIDISide) {
        let udp = side.receiver.udp?.statistics
        var malformed: [String: Int] = [:]
        if let udp, udp.truncated > 0 { malformed["oversized"] = udp.truncated }
        for (index, name) in MalformedOSC.names.enumerated() {
            let count = side.counters.malformed[index].load(ordering: .relaxed)
            if count > 0 { malformed[name] = count }
        }
        let malformedMessages = side.counters.malformedMessages.load(ordering: .relaxed)
        if malformedMessages > 0 { malformed["argumentsDoNotFit"] = malformedMessages }
        let tcp = side.receiver.tcp.map { BridgeStatus.OSCTCPInput($0.statistics) }
        self.init(
            listen: side.listenURLs.joined(separator: " and "), packets: (udp?.datagrams ?? 0) + (tcp?.packets ?? 0),
            bytes: (udp?.bytes ?? 0) + (tcp?.bytes ?? 0),
            messages: side.counters.messages.load(ordering: .relaxed),
            translated: side.counters.translated.load(ordering: .relaxed), malformed: malformed,
            unknownAddresses: side.counters.unknownAddress.load(ordering: .relaxed), notAllowed: udp?.notAllowed ?? 0,
            scheduled: side.counters.scheduled.load(ordering: .relaxed),
            late: side.counters.late.load(ordering: .relaxed),
            sysexDisabled: side.counters.sysexDisabled.load(ordering: .relaxed),
            sysexDropped: side.counters.sysexDropped.load(ordering: .relaxed),
            outputs: side.output.counters.indices.map { index in
                let port = side.output.counters[index]
                return BridgeStatus.OSCOutputPort(
                    name: side.outputNames[index], sent: port.sent.load(ordering: .relaxed),
                    droppedQueueFull: port.droppedQueueFull.load(ordering: .relaxed),
                    droppedRedundantNoteOffs: port.droppedRedundantNoteOffs.load(ordering: .relaxed),
                    droppedNoteOffs: port.droppedNoteOffs.load(ordering: .relaxed),
                    reservedNoteOffs: port.reservedNoteOffs.load(ordering: .relaxed),
                    droppedAtStop: port.droppedAtStop.load(ordering: .relaxed),
                    failed: port.failed.load(ordering: .relaxed),
                    queueHighWater: port.queueHighWater.load(ordering: .relaxed),
                    queueCapacity: side.output.queueCapacity,
                    scheduledHeld: port.scheduledHeld.load(ordering: .relaxed),
                    scheduledHighWater: port.scheduledHighWater.load(ordering: .relaxed),
                    droppedScheduled: Self.byKind(port.droppedScheduled))
            }, tcp: tcp, recovery: Self.recovery(side),
            syncRequests: side.replays.requests.load(ordering: .relaxed), replayed: side.values.replayed)
    }

    /// Note recovery's counters, once a sender has used it.
    private static func recovery(_ side: OSCToMIDISide) -> BridgeStatus.OSCRecovery? {
        let messages = side.recovery.listener.messages.load(ordering: .relaxed)
        let malformed = side.recovery.listener.malformed.load(ordering: .relaxed)
        guard messages + malformed > 0 else { return nil }
        return BridgeStatus.OSCRecovery(
            senders: side.recovery.listener.following.load(ordering: .relaxed), messages: messages,
            malformed: malformed,
            repaired: side.recovery.listener.repaired.load(ordering: .relaxed),
            releasedSilent: side.recovery.listener.releasedSilent.load(ordering: .relaxed),
            sendersLost: side.recovery.listener.sendersLost.load(ordering: .relaxed),
            sendersRefused: side.recovery.listener.sendersRefused.load(ordering: .relaxed),
            sendersAsked: side.recovery.listener.sendersAsked.load(ordering: .relaxed))
    }

    /// The kinds counted in `counts` (indexed by raw value), by name.
    private static func byKind(_ counts: borrowing FixedBuffer<Atomic<Int>>) -> [String: Int] {
        var result: [String: Int] = [:]
        for kind in MIDIEventKind.allCases {
            let count = counts[Int(kind.rawValue)].load(ordering: .relaxed)
            if count > 0 { result[kind.description] = count }
        }
        return result
    }

}
