import BridgeSession
import MIDIToOSCRuntime
import OSCToMIDIRuntime
import Platform
import Recovery
import Status

extension Bridge {
    /// A consistent-enough picture of the running bridge, from counters other threads update.
    public func status(version: String = "") -> BridgeStatus {
        BridgeStatus(
            version: version, client: currentConfig.clientName, uptimeSeconds: WallClock.monotonic - startTime,
            input: input, routes: routeSnapshot, sysexStore: sysexStore,
            oscInput: oscInputSnapshot, realtime: realtime)
    }
}
