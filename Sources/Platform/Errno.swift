import Glibc

/// A POSIX error number, as a system call left it in `errno`, with the text `strerror` gives.
public struct Errno: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: Int32

    public init(_ code: Int32) { self.code = code }

    /// The calling thread's `errno`, right after a call failed.
    public static var current: Errno { Errno(errno) }

    public var description: String { String(cString: strerror(code)) }

    public static let permissionDenied = Errno(EACCES)
    public static let noSuchFile = Errno(ENOENT)
}
