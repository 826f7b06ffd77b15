import Foundation
import Glibc

/// The daemon's local control channel: a Unix stream socket that answers every connection with
/// the bridge's status as one JSON document, then closes. `aseqosc status` is its client.
public final class ControlSocket: @unchecked Sendable {
    // @unchecked Sendable: the descriptor is set once; the accept thread owns the rest.

    public let path: String
    private let descriptor: Int32
    private let respond: @Sendable () -> Data
    private var thread: Thread?

    /// Where the daemon listens by default: the service's runtime directory, else the user's.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let runtime = environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first {
            return "\(runtime)/control"
        }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return "\(runtime)/aseqosc.control" }
        return "/tmp/aseqosc-\(getuid()).control"
    }

    /// Where `aseqosc status` looks, in order, when not told.
    public static func candidatePaths(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        var paths = ["/run/aseqosc/control"]
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { paths.append("\(runtime)/aseqosc.control") }
        paths.append("/tmp/aseqosc-\(getuid()).control")
        return paths
    }

    /// Listens on `path` (replacing a stale socket left by a crashed run).
    public init(path: String, respond: @escaping @Sendable () -> Data) throws(BridgeError) {
        self.path = path
        self.respond = respond
        guard path.utf8.count < 108 else { throw .system("control socket path too long: \(path)", ENAMETOOLONG) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket", errno) }
        unlink(path)
        var address = Self.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(fd, 8) == 0 else {
            let code = errno
            close(fd)
            throw .system("bind \(path)", code)
        }
        chmod(path, 0o666)  // read-only status for every local user
        descriptor = fd
    }

    /// Starts answering on a thread of its own.
    public func start() {
        let thread = Thread { [self] in
            while true {
                let connection = accept(descriptor, nil, nil)
                if connection < 0 {
                    if errno == EINTR { continue }
                    return  // closed by stop()
                }
                let data = respond()
                data.withUnsafeBytes { bytes in
                    var offset = 0
                    while offset < bytes.count {
                        let sent = send(
                            connection, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                        if sent <= 0 { break }
                        offset += sent
                    }
                }
                close(connection)
            }
        }
        thread.name = "aseqosc-control"
        thread.start()
        self.thread = thread
    }

    /// Stops answering and removes the socket file.
    public func stop() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
        unlink(path)
    }

    /// Connects to a daemon's socket and returns what it sent.
    public static func query(path: String) throws(BridgeError) -> Data {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket", errno) }
        defer { close(fd) }
        var address = address(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { throw .system("connect \(path)", errno) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }

    private static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        return address
    }
}
