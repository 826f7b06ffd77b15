import BridgeSession
import MIDIToOSCRuntime
import OSCToMIDIRuntime
import Platform
import Status

extension Bridge {
    /// A consistent-enough picture of the running bridge, from counters other threads update.
    func status(version: String = "") -> BridgeStatus {
        var status = BridgeStatus(
            version: version, client: currentConfig.clientName, uptimeSeconds: WallClock.monotonic - startTime,
            input: input, routes: routeSnapshot, sysexStore: sysexStore,
            oscInput: oscInputSnapshot, realtime: realtime)
        if currentConfig.touchOSCBridge != nil {
            status.touchOSCBridge = BridgeStatus.TouchOSCBridge(
                client: touchOSCClient.current?.description, clientsSeen: touchOSCClient.clientsSeen,
                clientsRenewed: touchOSCClient.clientsRenewed)
        }
        return status
    }
}
