/// An OSC message as an owned value.
package struct OSCMessage: Sendable, Hashable, CustomStringConvertible {
    /// The address, starting with `/`.
    package var address: String
    package var arguments: [OSCArgument]

    package init(_ address: String, _ arguments: [OSCArgument] = []) {
        self.address = address
        self.arguments = arguments
    }

    /// Copies a message out of a packet being read.
    package init(_ view: OSCMessageView) {
        address = view.addressString
        arguments = []
        arguments.reserveCapacity(view.argumentCount)
        for argument in view.arguments { arguments.append(OSCArgument(argument)) }
    }

    /// Bytes the message takes on the wire.
    var encodedSize: Int {
        var size = OSCWriter.padded(address.utf8.count + 1) + OSCWriter.padded(arguments.count + 2)
        for argument in arguments { size += argument.encodedSize }
        return size
    }

    /// Writes the message at the writer's position.
    func write(to writer: inout OSCWriter) {
        writer.beginMessage(address: address, argumentCount: arguments.count)
        for argument in arguments { argument.write(to: &writer) }
        writer.endMessage()
    }

    /// The message with its type tags and arguments, e.g. `/note_on ,ii i:60 i:100`.
    package var description: String {
        "\(address) ,\(String(decoding: arguments.map(\.typeTag), as: UTF8.self))"
            + arguments.map { " \($0)" }.joined()
    }
}

/// An OSC bundle as an owned value.
package struct OSCBundle: Sendable, Hashable, CustomStringConvertible {
    package var timeTag: OSCTimeTag
    /// Messages and nested bundles, in order.
    package var elements: [OSCPacket]

    package init(timeTag: OSCTimeTag = .immediately, _ elements: [OSCPacket] = []) {
        self.timeTag = timeTag
        self.elements = elements
    }

    /// Copies a bundle, and everything nested in it, out of a packet being read.
    package init(_ view: OSCBundleView) {
        timeTag = view.timeTag
        elements = []
        for element in view.elements { elements.append(OSCPacket(element)) }
    }

    /// Bytes the bundle takes on the wire.
    var encodedSize: Int {
        var size = OSCBundleView.headerSize
        for element in elements { size += 4 + element.encodedSize }
        return size
    }

    /// Writes the bundle at the writer's position.
    func write(to writer: inout OSCWriter) {
        writer.beginBundle(timeTag: timeTag)
        for element in elements {
            let slot = writer.beginElement()
            element.write(to: &writer)
            writer.endElement(slot)
        }
    }

    package var description: String {
        "#bundle \(timeTag) [" + elements.map(\.description).joined(separator: "; ") + "]"
    }
}

/// A whole OSC packet as an owned value: what travels in one UDP datagram.
package enum OSCPacket: Sendable, Hashable, CustomStringConvertible {
    case message(OSCMessage)
    case bundle(OSCBundle)

    /// Copies a packet out of a view.
    package init(_ view: OSCPacketView) {
        switch view {
        case .message(let message): self = .message(OSCMessage(message))
        case .bundle(let bundle): self = .bundle(OSCBundle(bundle))
        }
    }

    /// Validates and copies a packet out of `bytes`.
    package static func decode(_ bytes: [UInt8]) throws(OSCDecodeError) -> OSCPacket {
        let result: Result<OSCPacket, OSCDecodeError> = bytes.withUnsafeBytes { raw in
            do throws(OSCDecodeError) {
                return .success(OSCPacket(try OSCPacketView(raw)))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Bytes the packet takes on the wire.
    package var encodedSize: Int {
        switch self {
        case .message(let message): message.encodedSize
        case .bundle(let bundle): bundle.encodedSize
        }
    }

    /// Writes the packet at the writer's position.
    package func write(to writer: inout OSCWriter) {
        switch self {
        case .message(let message): message.write(to: &writer)
        case .bundle(let bundle): bundle.write(to: &writer)
        }
    }

    /// The packet's bytes; fails if they cannot be written, e.g. for an address without `/`
    /// or a string with a NUL in it.
    package func serialize() throws(OSCWriteError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: encodedSize)
        let result: Result<Int, OSCWriteError> = bytes.withUnsafeMutableBytes { buffer in
            var writer = OSCWriter(buffer)
            write(to: &writer)
            do throws(OSCWriteError) {
                return .success(try writer.finish())
            } catch {
                return .failure(error)
            }
        }
        // encodedSize is exact, so the writer fills the array; a shorter count would be a bug.
        _ = try result.get()
        return bytes
    }

    package var description: String {
        switch self {
        case .message(let message): message.description
        case .bundle(let bundle): bundle.description
        }
    }
}

extension OSCMessage {
    /// The message's bytes; see ``OSCPacket/serialize()``.
    package func serialize() throws(OSCWriteError) -> [UInt8] { try OSCPacket.message(self).serialize() }
}

extension OSCBundle {
    /// The bundle's bytes; see ``OSCPacket/serialize()``.
    package func serialize() throws(OSCWriteError) -> [UInt8] { try OSCPacket.bundle(self).serialize() }
}
