import BridgeSession
import Config
import MIDIToOSCRuntime
import OSCToMIDIRuntime
import Recovery
import Status

extension Bridge {
    /// The OSC -> MIDI side for `config`, or nil when it has none. Its output ports come after
    /// the input ports, so the inputs keep the numbers 0, 1, ...
    func makeOSCInput(_ config: BridgeConfig) throws(BridgeError) -> OSCToMIDISide? {
        guard let oscConfig = config.oscInput else { return nil }
        let side = try OSCToMIDISide(
            session: session, config: oscConfig, outputs: config.outputs, sysexCapacity: config.sysexCapacity,
            parts: OSCToMIDIParts(outputs: config.outputs), tap: oscTap)
        side.realtime = realtime
        side.onSyncRequest = { [runner] in runner.replaySignal.request($0) }
        if oscConfig.touchOSCBridge != nil { side.learnedClient = touchOSCClient }
        session.outputConnected = { [weak side] in side?.deviceReturned(ourPort: $0) }
        return side
    }

    /// On reload (threads paused): an OSC input whose settings and output ports are unchanged
    /// keeps running untouched; otherwise the old one stops (its held notes get their note-offs)
    /// and its ports go, and the new one starts.
    func reloadOSCInput(from old: BridgeConfig, to new: BridgeConfig) throws(BridgeError) {
        if old.oscInput == new.oscInput && old.outputs == new.outputs { return }
        if let side = oscInput {
            stopOSCInput(side)
            side.removePorts()
            oscInput = nil
            log.info("osc input: settings or output ports changed; restarting it")
        }
        oscInput = try makeOSCInput(new)
        oscInput?.start()
    }

    /// Stops the OSC -> MIDI side (its held notes get their note-offs) and logs its counters.
    func stopOSCInput(_ side: OSCToMIDISide) {
        side.stop()
        log.notice("osc input: \(BridgeStatus.OSCInput(side).summary)")
    }
}
