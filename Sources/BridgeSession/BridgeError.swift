import ALSASequencer
import Endpoints
import OSCTransport
import Platform

/// A failure while starting or running the bridge: the error of the layer that failed, kept
/// whole and turned into text only where it is shown.
package enum BridgeError: Error, CustomStringConvertible {
    case system(SystemCallError)
    /// The sequencer refused: opening the client, a port or the queue.
    case alsa(ALSAError)
    /// The OSC input cannot listen.
    case oscInput(ListenError)
    /// A destination has no valid address or does not resolve (`endpoint` as the config gave it).
    case destination(endpoint: String, OSCDestinationError)
    /// The destinations' sockets cannot be opened.
    case sender(UDPSenderError)
    /// A setting this machine cannot honour (a CPU the process may not use).
    case unsupported(String)

    package var description: String {
        switch self {
        case .system(let error): error.description
        case .alsa(let error): error.description
        case .oscInput(let error): "osc input: \(error)"
        case .destination(let endpoint, let error): "destination \(endpoint): \(error)"
        case .sender(let error): error.description
        case .unsupported(let message): message
        }
    }
}
