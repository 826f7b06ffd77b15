import Glibc

/// A POSIX error number, as a system call left it in `errno`, with the text `strerror` gives:
/// the one type that carries one. Errors with more to say (which call, on what) wrap it.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: Int32

    public init(_ code: Int32) { self.code = code }

    /// The calling thread's `errno`: right after a call failed, or set before a call that
    /// reports failure only there (as swift-system's `Errno.current` is).
    public static var current: Errno {
        get { Errno(errno) }
        set { errno = newValue.code }
    }

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
    /// `EINPROGRESS`: a non-blocking `connect` goes on after the call returned.
    public static let inProgress = Errno(EINPROGRESS)
    /// `ECONNABORTED`: a connection ended while it waited to be accepted.
    public static let connectionAborted = Errno(ECONNABORTED)
    /// `ECONNREFUSED`: nothing listens there (for UDP, an earlier datagram came back refused).
    public static let connectionRefused = Errno(ECONNREFUSED)
}

/// A system call that failed: what was called (with what it was given) and the `errno` it left.
public struct SystemCallError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The call, as the message names it: `socket`, `bind /run/aseqosc/control`.
    public var call: String
    /// What it left in `errno`.
    public var error: Errno

    public init(_ call: String, _ error: Errno) {
        self.call = call
        self.error = error
    }

    public var description: String { "\(call): \(error)" }
}
