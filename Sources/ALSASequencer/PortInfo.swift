import CALSA
import Endpoints

/// What a sequencer port allows other clients to do with it.
package struct PortCapabilities: OptionSet, Hashable, Sendable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Events can be read from the port. The corresponding C constant is `SND_SEQ_PORT_CAP_READ`.
    package static let read = PortCapabilities(rawValue: UInt32(SND_SEQ_PORT_CAP_READ))
    /// Events can be written to the port. The corresponding C constant is `SND_SEQ_PORT_CAP_WRITE`.
    package static let write = PortCapabilities(rawValue: UInt32(SND_SEQ_PORT_CAP_WRITE))
    /// Others may subscribe to read. The corresponding C constant is `SND_SEQ_PORT_CAP_SUBS_READ`.
    package static let subscribeRead = PortCapabilities(rawValue: UInt32(SND_SEQ_PORT_CAP_SUBS_READ))
    /// Others may subscribe to write. The corresponding C constant is `SND_SEQ_PORT_CAP_SUBS_WRITE`.
    package static let subscribeWrite = PortCapabilities(rawValue: UInt32(SND_SEQ_PORT_CAP_SUBS_WRITE))
    /// Routing not allowed. The corresponding C constant is `SND_SEQ_PORT_CAP_NO_EXPORT`.
    static let noExport = PortCapabilities(rawValue: UInt32(SND_SEQ_PORT_CAP_NO_EXPORT))

    /// A port others can read MIDI from by subscribing: a source.
    package var isSource: Bool { contains([.read, .subscribeRead]) && !contains(.noExport) }
    /// A port others can send MIDI to by subscribing: a destination.
    var isDestination: Bool { contains([.write, .subscribeWrite]) && !contains(.noExport) }
}

/// One port as the sequencer lists it, with its client's name.
package struct PortInfo: Hashable, Sendable, CustomStringConvertible {
    package var address: PortAddress
    package var clientName: String
    package var portName: String
    package var capabilities: PortCapabilities
    /// The port type bits (`SND_SEQ_PORT_TYPE_*`).
    var typeBits: UInt32
    /// Whether the client is kernel code (a driver) rather than a user program.
    var isKernelClient: Bool
    /// The sound card the client belongs to, if any.
    var card: Int32?

    package init(
        address: PortAddress, clientName: String, portName: String, capabilities: PortCapabilities,
        typeBits: UInt32, isKernelClient: Bool, card: Int32?
    ) {
        self.address = address
        self.clientName = clientName
        self.portName = portName
        self.capabilities = capabilities
        self.typeBits = typeBits
        self.isKernelClient = isKernelClient
        self.card = card
    }

    /// A hardware port: one of a sound card's driver (USB MIDI, virmidi). Midi Through is a
    /// kernel client too, but belongs to no card and is marked software.
    package var isHardware: Bool {
        typeBits & UInt32(SND_SEQ_PORT_TYPE_HARDWARE) != 0 || card != nil
    }

    /// Whether the port belongs to the kernel's own System client (timer, announce).
    var isSystem: Bool { address.client == 0 }

    /// `"system"`, `"hardware"` or `"software"`, as `aseqosc ports` prints it.
    package var kind: String { isSystem ? "system" : isHardware ? "hardware" : "software" }

    /// `"in"` (a source), `"out"` (a destination), `"in/out"` or `"-"`, from the bridge's point
    /// of view: aseqosc reads MIDI *in* from sources and writes it *out* to destinations.
    package var direction: String {
        switch (capabilities.isSource, capabilities.isDestination) {
        case (true, true): "in/out"
        case (true, false): "in"
        case (false, true): "out"
        case (false, false): "-"
        }
    }

    package var description: String { "\(address) \(clientName):\(portName)" }
}
