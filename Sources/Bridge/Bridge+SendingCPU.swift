import BridgeSession
import Config
import Endpoints
import MIDIToOSCRuntime
import OSCToMIDIRuntime
import OSCTransport
import Platform
import Recovery
import Status

extension Bridge {
    /// Where `realtime.cpu` and the destinations of `routes` put the input thread
    /// (see `SendingCPU`): the CPU, and why, for the log; nil for any CPU.
    static func sendingCPU(_ choice: SendingCPU, routes: [RouteRuntime]) throws(BridgeError)
        -> (cpu: Int, reason: String)?
    {
        switch choice {
        case .any:
            return nil
        case .fixed(let cpu):
            guard RealtimeScheduler.mayRun(on: cpu) else {
                throw .unsupported(
                    "realtime.cpu: this process may not run on CPU \(cpu) (taskset, CPUAffinity= or its cgroup keep "
                        + "it off it); CPU \(RealtimeScheduler.highestAllowedCPU ?? 0) is one it may use")
            }
            return (cpu, "realtime.cpu")
        case .auto:
            let local = IPAddress.ofThisMachine()
            for runtime in routes {
                for destination in runtime.resolved {
                    guard let ip = destination.address.ip, ip.isLoopback || local.contains(ip) else { continue }
                    guard let cpu = RealtimeScheduler.highestAllowedCPU else { return nil }
                    return (cpu, "\(destination.destination) is on this machine")
                }
            }
            return nil
        }
    }

    /// Tells the scheduler where the input thread goes from its next start, and
    /// logs it when it changes. Only while they are stopped.
    func placeSendingThreads(_ routes: [RouteRuntime], choice: SendingCPU) throws(BridgeError) {
        let placement = try Self.sendingCPU(choice, routes: routes)
        guard placement?.cpu != realtime.sendingCPU else { return }
        realtime.keepSendingThreads(on: placement?.cpu)
        if let placement {
            log.info(
                "input thread kept on CPU \(placement.cpu) (\(placement.reason)): datagrams to this "
                    + "machine from one CPU arrive in the order they were sent")
        } else {
            log.info("input thread runs on any CPU")
        }
    }
}
