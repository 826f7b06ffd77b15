import OSC

/// `/aseqosc/sync`, which asks for last values again (docs/OSC.md, "Replay"): sent by a control
/// surface or a script to the OSC input, and, without arguments, by a recovery receiver back to
/// a sender it hears anew, whose destination socket takes it (``RecoveryListener``).
package enum SyncRequestMessage {
    /// The address, reserved for this protocol.
    package static let address: StaticString = "/aseqosc/sync"

    /// Whether `message` is at ``address`` (its arguments are the reader's to check).
    package static func isAddressed(_ message: OSCMessageView) -> Bool {
        address.withUTF8Buffer { message.address.elementsEqual(UnsafeRawBufferPointer($0)) }
    }

    /// Whether `datagram` is the request a recovery receiver sends: one message at
    /// ``address``, no bundle.
    package static func isRequest(_ datagram: UnsafeRawBufferPointer) -> Bool {
        guard case .message(let message)? = try? OSCPacketView(datagram) else { return false }
        return isAddressed(message)
    }

    /// Writes the request without arguments into `buffer`; returns its size, or 0 if it does
    /// not fit.
    package static func write(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var writer = OSCWriter(buffer)
        writer.beginMessage(address: address, argumentCount: 0)
        writer.endMessage()
        return (try? writer.finish()) ?? 0
    }
}
