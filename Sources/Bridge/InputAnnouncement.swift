import Config
import Discovery
import Glibc
import Platform
import Synchronization

/// The DNS-SD announcement of the OSC input: made when the config's input listens where other
/// machines can reach it, changed or withdrawn when a reload changes that.
final class InputAnnouncement: Sendable {
    private let announcer = Mutex<ServiceAnnouncer?>(nil)
    private let log: Logger

    package init(log: Logger) {
        self.log = log
    }

    /// Announces what `input` listens on (and the OSCQuery server on `queryPort`), or withdraws
    /// the announcement (nil, `announce: false`, or a loopback address).
    func apply(_ input: OSCInputConfig?, queryPort: UInt16? = nil) {
        var services: [OSCService] = []
        if let input, input.isReachableFromNetwork {
            if input.announce {
                let transports = input.transports.sorted().map { $0 == .udp ? OSCService.Transport.udp : .tcp }
                services = OSCService.announcements(
                    name: input.serviceName ?? OSCService.defaultName, port: UInt16(input.port),
                    transports: transports, queryPort: queryPort)
            }
            // As touchosc2midi announces itself: the host name, no TXT records.
            if let bridge = input.touchOSCBridge, bridge.announce {
                services.append(
                    OSCService(
                        name: bridge.serviceName ?? OSCService.hostName, type: TouchOSCBridgeConfig.serviceType,
                        port: UInt16(input.port), txt: []))
            }
        }
        guard let input, !services.isEmpty else {
            announcer.withLock { $0 = nil }
            return
        }
        announcer.withLock { current in
            if let current {
                current.update(services: services, listeningOn: input.host)
                return
            }
            let log = log
            do {
                current = try ServiceAnnouncer(services: services, listeningOn: input.host) { isError, message in
                    if isError { log.error(message) } else { log.notice(message) }
                }
            } catch {
                log.warning("announce: \(error); the OSC input is not announced\(Self.dynamicUserHint)")
            }
        }
    }

    /// systemd gives dynamic users uids from 61184 to 65519; dbus-daemon (Debian's system bus)
    /// answers them no Hello (systemd issue 22737), so the announcement fails under a unit with
    /// `DynamicUser=yes` for a reason the D-Bus error does not say.
    static var dynamicUserHint: String {
        guard (61184...65519).contains(getuid()) else { return "" }
        return " (the service runs as a dynamic user, whom dbus-daemon's system bus does not answer: "
            + "see \"Found on the network\" in docs/CONFIG.md for the drop-in that gives it a fixed user)"
    }

    /// What `status` says of the announcement; nil when there is none.
    var state: String? { announcer.withLock { $0?.state } }
}
