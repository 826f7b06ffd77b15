import Glibc

// Every system call aseqosc makes goes through glibc's own wrapper (`read`, `send`,
// `recvmmsg`...), which answers -1 and leaves the reason in `errno`; these two read that answer
// in one place, as swift-system's do (Sources/System/Internals/Syscalls.swift).

/// The value of a glibc call that answers -1 on failure, or the `errno` it left.
@inlinable @inline(__always)
public func valueOrErrno<I: FixedWidthInteger>(_ result: I) -> Result<I, Errno> {
    result == -1 ? .failure(.current) : .success(result)
}

/// `call`'s value, made again while it fails with `EINTR` (a signal arrived before it did
/// anything), or the `errno` it left otherwise.
@inlinable @inline(__always)
public func valueOrErrno<I: FixedWidthInteger>(retryOnInterrupt call: () -> I) -> Result<I, Errno> {
    while true {
        let result = valueOrErrno(call())
        if case .failure(.interrupted) = result { continue }
        return result
    }
}
