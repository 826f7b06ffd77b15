import Platform

/// A failure while starting or running the bridge.
public enum BridgeError: Error, CustomStringConvertible {
    case system(SystemCallError)
    case alsa(String)
    case network(String)
    /// A setting this machine cannot honour (a CPU the process may not use).
    case unsupported(String)

    public var description: String {
        switch self {
        case .system(let error): error.description
        case .alsa(let message): message
        case .network(let message): message
        case .unsupported(let message): message
        }
    }
}
