import Glibc
import Platform

/// Writes a line to standard error, where diagnostics belong so stdout stays parseable.
func printError(_ message: String) {
    writeAll("aseqosc: \(message)\n", to: STDERR_FILENO)
}

/// Writes `text` to a file descriptor unbuffered, so lines interleave correctly with children
/// and survive an abrupt exit.
func writeAll(_ text: String, to descriptor: Int32) {
    var text = text
    _ = text.withUTF8 { FileSystem.write(UnsafeRawBufferPointer($0), to: descriptor) }
}
