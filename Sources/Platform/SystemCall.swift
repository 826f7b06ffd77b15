import Glibc

// Every system call aseqosc makes goes through glibc's own wrapper (`read`, `send`,
// `recvmmsg`...), which answers -1 and leaves the reason in `errno`; the functions here read
// that answer in one place, as swift-system's do (Sources/System/Internals/Syscalls.swift), and
// retry a call a signal interrupted (`EINTR`) in one place. Nothing outside Platform reads
// `errno`. The wrappers below them are for what more than one caller does.

/// The value of a glibc call that answers -1 on failure, or the `errno` it left.
@inlinable @inline(__always)
package func valueOrErrno<I: FixedWidthInteger>(_ result: I) -> Result<I, Errno> {
    result == -1 ? .failure(.current) : .success(result)
}

/// `call`'s value, made again while it fails with `EINTR` (a signal arrived before it did
/// anything), or the `errno` it left otherwise.
@inlinable @inline(__always)
package func valueOrErrno<I: FixedWidthInteger>(retryOnInterrupt call: () -> I) -> Result<I, Errno> {
    while true {
        let result = valueOrErrno(call())
        if case .failure(.interrupted) = result { continue }
        return result
    }
}

/// Nothing, for a glibc call that answers 0 on success and -1 on failure, or the `errno` it left.
@inlinable @inline(__always)
package func nothingOrErrno<I: FixedWidthInteger>(_ result: I) -> Result<Void, Errno> {
    valueOrErrno(result).map { _ in () }
}

/// Nothing, for a call that answers 0 on success and -1 on failure, made again while it fails
/// with `EINTR`, or the `errno` it left otherwise.
@inlinable @inline(__always)
package func nothingOrErrno<I: FixedWidthInteger>(retryOnInterrupt call: () -> I) -> Result<Void, Errno> {
    valueOrErrno(retryOnInterrupt: call).map { _ in () }
}

/// Nothing, for a call that returns its error number instead of setting `errno` (the
/// `pthread_*` calls, `clock_nanosleep`), made again while that number is `EINTR`.
@inlinable @inline(__always)
package func nothingOrErrorNumber(retryOnInterrupt call: () -> Int32) -> Result<Void, Errno> {
    while true {
        let code = call()
        if code == 0 { return .success(()) }
        if code != EINTR { return .failure(Errno(code)) }
    }
}

/// Sets socket option `option` at `level` to `value` (an `Int32`, a `linger`, a `timeval`, an
/// `ip_mreqn`: what the option takes).
@inlinable
package func setSocketOption<Value: BitwiseCopyable>(
    _ descriptor: Int32, _ level: Int32, _ option: Int32, _ value: Value
) -> Result<Void, Errno> {
    withUnsafeBytes(of: value) {
        nothingOrErrno(setsockopt(descriptor, level, option, $0.baseAddress, socklen_t($0.count)))
    }
}

/// The error a socket holds for its owner (`SO_ERROR`, read and cleared): how a non-blocking
/// `connect` ended. Nil when there is none.
package func pendingSocketError(_ descriptor: Int32) -> Errno? {
    var code: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    switch nothingOrErrno(getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length)) {
    case .success: return code == 0 ? nil : Errno(code)
    case .failure(let error): return error
    }
}
