import Glibc

/// The few file operations the daemon and its commands make, with POSIX errors.
package enum FileSystem {
    /// The whole content of the file at `path`.
    package static func contents(of path: String) throws(Errno) -> [UInt8] {
        let descriptor: Int32
        switch valueOrErrno(retryOnInterrupt: { open(path, O_RDONLY | O_CLOEXEC) }) {
        case .success(let opened): descriptor = opened
        case .failure(let error): throw error
        }
        defer { close(descriptor) }
        return try contents(of: descriptor)
    }

    /// What `descriptor` has to read, to its end (standard input, a file already open).
    package static func contents(of descriptor: Int32) throws(Errno) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count: Int
            switch chunk.withUnsafeMutableBytes({ chunk in
                valueOrErrno(retryOnInterrupt: { read(descriptor, chunk.baseAddress, chunk.count) })
            }) {
            case .success(let read): count = read
            case .failure(let error): throw error
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// Writes all of `bytes` to `descriptor` (a pipe, a terminal, a file), unbuffered; stops
    /// early only when the descriptor refuses, which it answers.
    @discardableResult
    package static func write(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Result<Void, Errno> {
        var offset = 0
        while offset < bytes.count {
            switch valueOrErrno(retryOnInterrupt: {
                Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            }) {
            case .success(let written) where written > 0: offset += written
            case .success: return .success(())
            case .failure(let error): return .failure(error)
            }
        }
        return .success(())
    }

    /// Whether something (a file, folder or socket) exists at `path`.
    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// `path` with links, `.` and `..` resolved; nil when it does not exist.
    package static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    /// The names in the folder at `path` (without `.` and `..`); empty when it cannot be read.
    package static func names(in path: String) -> [String] {
        guard let folder = opendir(path) else { return [] }
        defer { closedir(folder) }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}
