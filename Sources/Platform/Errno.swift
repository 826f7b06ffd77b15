import Glibc

/// A POSIX error number, as a system call left it in `errno`, with the text `strerror` gives.
public struct Errno: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: Int32

    public init(_ code: Int32) { self.code = code }

    /// The calling thread's `errno`, right after a call failed.
    public static var current: Errno { Errno(errno) }

    public var description: String { String(cString: strerror(code)) }

    /// The symbolic name (`EPERM`) for the errors a person may need to look up, else the number.
    public var name: String {
        switch code {
        case EPERM: "EPERM"
        case EACCES: "EACCES"
        case EINVAL: "EINVAL"
        case ENOMEM: "ENOMEM"
        case EAGAIN: "EAGAIN"
        case ENOSYS: "ENOSYS"
        default: "errno \(code)"
        }
    }

    public static let permissionDenied = Errno(EACCES)
    public static let noSuchFile = Errno(ENOENT)
    /// `EINTR`: a signal arrived before the call did anything.
    public static let interrupted = Errno(EINTR)
    /// `EAGAIN` (the same number as `EWOULDBLOCK`): a non-blocking call found nothing to do.
    public static let wouldBlock = Errno(EAGAIN)
}

/// A system call that failed: what was called (with what it was given) and the `errno` it left.
public struct SystemCallError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The call, as the message names it: `socket`, `bind /run/aseqosc/control`.
    public var call: String
    public var errno: Errno

    public init(_ call: String, _ errno: Errno) {
        self.call = call
        self.errno = errno
    }

    /// The failed call and the calling thread's `errno`, right after the call failed.
    public static func current(_ call: String) -> SystemCallError { SystemCallError(call, .current) }

    public var description: String { "\(call): \(errno)" }
}
