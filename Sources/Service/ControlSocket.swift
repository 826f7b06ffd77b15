import Glibc
import Platform

/// The daemon's local control channel: a Unix stream socket. A client writes one request line
/// (`status`, `status json` or `reload`) and reads the answer until the daemon closes; a client
/// that writes nothing gets the status as JSON. `aseqosc status` and `aseqosc reload` are its
/// clients.
package final class ControlSocket: @unchecked Sendable {
    // @unchecked Sendable: the descriptor is set once; the accept thread owns the rest.

    let path: String
    private let descriptor: Int32
    private let respond: @Sendable (String) -> [UInt8]
    private var thread: SystemThread?

    /// The longest a client may take to send its request or read the answer.
    static let clientTimeoutMilliseconds: Int32 = 1000

    /// Where the daemon listens by default: the service's runtime directory, else the user's.
    package static func defaultPath(environment: [String: String] = ProcessEnvironment.current) -> String {
        if let runtime = environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first {
            return "\(runtime)/control"
        }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return "\(runtime)/aseqosc.control" }
        return "/tmp/aseqosc-\(getuid()).control"
    }

    /// The socket of the systemd instance `name`: `aseqosc.service` for "" (or "aseqosc"),
    /// `aseqosc@NAME.service` otherwise (the units' `RuntimeDirectory`).
    package static func instancePath(_ name: String) -> String {
        name.isEmpty || name == "aseqosc" ? "/run/aseqosc/control" : "/run/aseqosc-\(name)/control"
    }

    /// Every place a daemon may listen, the systemd instances first, then a user's own run.
    package static func candidatePaths(environment: [String: String] = ProcessEnvironment.current) -> [String] {
        var paths = [instancePath("")]
        for name in FileSystem.names(in: "/run") where name.hasPrefix("aseqosc-") {
            paths.append("/run/\(name)/control")
        }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { paths.append("\(runtime)/aseqosc.control") }
        paths.append("/tmp/aseqosc-\(getuid()).control")
        return paths
    }

    /// The instance name a socket path belongs to, as `--instance` takes it ("" for the main
    /// service, nil for a socket outside `/run`).
    package static func instanceName(of path: String) -> String? {
        if path == instancePath("") { return "" }
        guard path.hasPrefix("/run/aseqosc-"), path.hasSuffix("/control") else { return nil }
        return String(path.dropFirst("/run/aseqosc-".count).dropLast("/control".count))
    }

    /// Listens on `path` (replacing a stale socket left by a crashed run). `respond` gets each
    /// request line and returns the answer.
    package init(path: String, respond: @escaping @Sendable (String) -> [UInt8]) throws(SystemCallError) {
        self.path = path
        self.respond = respond
        guard path.utf8.count < 108 else {
            throw SystemCallError("control socket path too long: \(path)", Errno(ENAMETOOLONG))
        }
        let fd = try Self.unixSocket()
        unlink(path)
        var address = Self.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                nothingOrErrno(bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)))
            }
        }.flatMap { nothingOrErrno(listen(fd, 8)) }
        if case .failure(let error) = bound {
            close(fd)
            throw SystemCallError("bind \(path)", error)
        }
        chmod(path, 0o666)  // status for every local user; a reload changes nothing the file does not say
        descriptor = fd
    }

    /// Starts answering on a thread of its own.
    package func start() {
        thread = SystemThread(name: "aseqosc-control") { [self] in
            while true {
                switch valueOrErrno(retryOnInterrupt: { accept(descriptor, nil, nil) }) {
                case .success(let connection):
                    serve(connection)
                    close(connection)
                case .failure(.connectionAborted): continue
                case .failure: return  // closed by stop()
                }
            }
        }
    }

    private func serve(_ connection: Int32) {
        Self.setTimeouts(connection)
        let request = Self.readRequest(connection)
        Self.sendAll(respond(request), to: connection)
    }

    /// Stops answering and removes the socket file.
    package func stop() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
        thread?.join()
        unlink(path)
    }

    /// Connects to a daemon's socket, sends `request` and returns what it answered.
    package static func query(path: String, request: String = "status json") throws(SystemCallError) -> [UInt8] {
        let fd = try connected(to: path)
        defer { close(fd) }
        sendAll(Array((request + "\n").utf8), to: fd)
        shutdown(fd, Int32(SHUT_WR))
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while case .success(let count) = valueOrErrno(retryOnInterrupt: { recv(fd, &buffer, buffer.count, 0) }),
            count > 0
        {
            answer.append(contentsOf: buffer[0..<count])
        }
        return answer
    }

    /// Whether a daemon answers on `path` (a socket file left by a killed run does not).
    package static func isLive(_ path: String) -> Bool {
        guard FileSystem.exists(path), let fd = try? connected(to: path) else { return false }
        close(fd)
        return true
    }

    /// A stream socket connected to the daemon's socket at `path`.
    private static func connected(to path: String) throws(SystemCallError) -> Int32 {
        let fd = try unixSocket()
        var address = address(path)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                nothingOrErrno(connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)))
            }
        }
        if case .failure(let error) = result {
            close(fd)
            throw SystemCallError("connect \(path)", error)
        }
        return fd
    }

    /// A Unix stream socket, closed on exec.
    private static func unixSocket() throws(SystemCallError) -> Int32 {
        switch valueOrErrno(socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)) {
        case .success(let fd): return fd
        case .failure(let error): throw SystemCallError("socket", error)
        }
    }

    /// The first line the client sent, up to 256 bytes; empty when it sent nothing in time.
    private static func readRequest(_ connection: Int32) -> String {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 256,
            case .success(1) = valueOrErrno(retryOnInterrupt: { recv(connection, &byte, 1, 0) }),
            byte != UInt8(ascii: "\n")
        {
            line.append(byte)
        }
        return String(decoding: line, as: UTF8.self)
    }

    private static func setTimeouts(_ connection: Int32) {
        let timeout = timeval(tv_sec: Int(clientTimeoutMilliseconds / 1000), tv_usec: 0)
        _ = setSocketOption(connection, SOL_SOCKET, SO_RCVTIMEO, timeout)
        _ = setSocketOption(connection, SOL_SOCKET, SO_SNDTIMEO, timeout)
    }

    private static func sendAll(_ bytes: [UInt8], to connection: Int32) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count,
                case .success(let sent) = valueOrErrno(retryOnInterrupt: {
                    send(connection, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                }),
                sent > 0
            {
                offset += sent
            }
        }
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
