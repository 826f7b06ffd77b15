import Glibc

/// The process's environment variables, read from `environ`.
package enum ProcessEnvironment {
    /// Read once, when first asked for: aseqosc never sets a variable, and `run` asks several
    /// times as it starts.
    public static let current: [String: String] = {
        var variables: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                variables[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return variables
    }()
}
