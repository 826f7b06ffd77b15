import Glibc

/// Writes a line to standard error, where diagnostics belong so stdout stays parseable.
func printError(_ message: String) {
    writeAll("aseqosc: \(message)\n", to: STDERR_FILENO)
}

/// Writes `text` to a file descriptor unbuffered, so lines interleave correctly with children
/// and survive an abrupt exit.
func writeAll(_ text: String, to descriptor: Int32) {
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
