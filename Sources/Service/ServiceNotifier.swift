import Glibc
import Platform

/// Speaks systemd's notify protocol: datagrams such as `READY=1` to the Unix socket named by
/// `$NOTIFY_SOCKET` (a path, or an abstract name starting with `@`). Without the variable every
/// call does nothing, so the same binary runs under systemd and by hand.
package final class ServiceNotifier: Sendable {
    private let descriptor: Int32
    private let address: sockaddr_un?
    private let addressLength: socklen_t
    /// The watchdog interval systemd asked for (`WATCHDOG_USEC`), if any.
    package let watchdogInterval: Duration?

    package init(environment: [String: String] = ProcessEnvironment.current) {
        if let usec = environment["WATCHDOG_USEC"].flatMap(UInt64.init),
            environment["WATCHDOG_PID"].flatMap(Int32.init).map({ $0 == getpid() }) ?? true
        {
            watchdogInterval = .microseconds(usec)
        } else {
            watchdogInterval = nil
        }
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty, path.utf8.count < 108 else {
            descriptor = -1
            address = nil
            addressLength = 0
            return
        }
        var target = sockaddr_un()
        target.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &target.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
            if bytes.first == UInt8(ascii: "@") { raw[0] = 0 }  // abstract namespace
        }
        address = target
        addressLength = socklen_t(
            MemoryLayout<sa_family_t>.size + bytes.count + (bytes.first == UInt8(ascii: "@") ? 0 : 1))
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Whether a service manager is listening.
    var isActive: Bool { descriptor >= 0 && address != nil }

    /// Sends one notification, e.g. `"READY=1\nSTATUS=running"`. Failures are ignored: the
    /// service must keep working if the manager went away.
    package func notify(_ state: String) {
        guard descriptor >= 0, var target = address else { return }
        let bytes = Array(state.utf8)
        _ = withUnsafePointer(to: &target) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                sendto(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL), socketAddress, addressLength)
            }
        }
    }
}
