import CALSA
import Endpoints

/// What a sequencer port allows other clients to do with it.
public struct PortCapabilities: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Events can be read from the port. The corresponding C constant is `SND_SEQ_PORT_CAP_READ`.
    public static let read = PortCapabilities(rawValue: UInt32(SND_SEQ_PORT_CAP_READ))
    /// Events can be written to the port. The corresponding C constant is `SND_SEQ_PORT_CAP_WRITE`.
    public static let write = PortCapabilities(rawValue: UInt32(SND_SEQ_PORT_CAP_WRITE))
    /// Others may subscribe to read. The corresponding C constant is `SND_SEQ_PORT_CAP_SUBS_READ`.
    public static let subscribeRead = PortCapabilities(rawValue: UInt32(SND_SEQ_PORT_CAP_SUBS_READ))
    /// Others may subscribe to write. The corresponding C constant is `SND_SEQ_PORT_CAP_SUBS_WRITE`.
    public static let subscribeWrite = PortCapabilities(rawValue: UInt32(SND_SEQ_PORT_CAP_SUBS_WRITE))
    /// Routing not allowed. The corresponding C constant is `SND_SEQ_PORT_CAP_NO_EXPORT`.
    public static let noExport = PortCapabilities(rawValue: UInt32(SND_SEQ_PORT_CAP_NO_EXPORT))

    /// A port others can read MIDI from by subscribing: a source.
    public var isSource: Bool { contains([.read, .subscribeRead]) && !contains(.noExport) }
    /// A port others can send MIDI to by subscribing: a destination.
    public var isDestination: Bool { contains([.write, .subscribeWrite]) && !contains(.noExport) }
}

/// One port as the sequencer lists it, with its client's name.
public struct PortInfo: Hashable, Sendable, CustomStringConvertible {
    public var address: PortAddress
    public var clientName: String
    public var portName: String
    public var capabilities: PortCapabilities
    /// The port type bits (`SND_SEQ_PORT_TYPE_*`).
    public var typeBits: UInt32
    /// Whether the client is kernel code (a driver) rather than a user program.
    public var isKernelClient: Bool
    /// The sound card the client belongs to, if any.
    public var card: Int32?

    public init(
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
    public var isHardware: Bool {
        typeBits & UInt32(SND_SEQ_PORT_TYPE_HARDWARE) != 0 || card != nil
    }

    /// Whether the port belongs to the kernel's own System client (timer, announce).
    public var isSystem: Bool { address.client == 0 }

    /// `"system"`, `"hardware"` or `"software"`, as `aseqosc ports` prints it.
    public var kind: String { isSystem ? "system" : isHardware ? "hardware" : "software" }

    /// `"in"` (a source), `"out"` (a destination), `"in/out"` or `"-"`, from the bridge's point
    /// of view: aseqosc reads MIDI *in* from sources and writes it *out* to destinations.
    public var direction: String {
        switch (capabilities.isSource, capabilities.isDestination) {
        case (true, true): "in/out"
        case (true, false): "in"
        case (false, true): "out"
        case (false, false): "-"
        }
    }

    public var description: String { "\(address) \(clientName):\(portName)" }
}
