// libFuzzer target: any datagram through the zero-copy OSC decoder, the owned decoder and back.
//
// A packet the view accepts must (1) re-encode from the views, byte for byte, to the input
// (validation checked every length and padding byte, so nothing may be lost), and (2) survive
// the owned round trip: decode, serialize, decode gives the same value. A packet the view
// refuses must be refused by the owned decoder too.
@testable import OSC

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard let view = try? OSCPacketView(bytes) else {
        if (try? OSCPacket.decode(Array(bytes))) != nil {
            fatalError("the owned decoder took a packet the view refused")
        }
        return 0
    }

    let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 4)
    defer { copy.deallocate() }
    var writer = OSCWriter(copy)
    write(view, into: &writer)
    guard let written = try? writer.finish() else {
        fatalError("a decoded packet did not re-encode: \(writer.failure!)")
    }
    guard written == size, UnsafeRawBufferPointer(copy).elementsEqual(bytes) else {
        fatalError("re-encoding from the views changed the bytes (\(written) of \(size))")
    }

    let owned = OSCPacket(view)
    let serialized: [UInt8]
    do {
        serialized = try owned.serialize()
    } catch {
        fatalError("a decoded packet did not serialize: \(error)")
    }
    guard let again = try? OSCPacket.decode(serialized), again == owned else {
        fatalError("decode(serialize(packet)) is not the packet: \(owned)")
    }
    return 0
}

/// Writes a packet read in place, using only the views' bytes (no Strings in between).
func write(_ view: OSCPacketView, into writer: inout OSCWriter) {
    switch view {
    case .message(let message):
        writer.beginMessage(address: message.address, typeTags: message.typeTags)
        var count = 0
        for argument in message.arguments {
            switch argument {
            case .int32(let value): writer.append(int32: value)
            case .float32(let value): writer.append(float32: value)
            case .string(let value): writer.append(string: value)
            case .blob(let value): writer.append(blob: value)
            case .int64(let value): writer.append(int64: value)
            case .double(let value): writer.append(double: value)
            case .timeTag(let value): writer.append(timeTag: value)
            case .true: writer.append(bool: true)
            case .false: writer.append(bool: false)
            case .nil: writer.appendNil()
            case .impulse: writer.appendImpulse()
            case .midi(let port, let status, let data1, let data2):
                writer.append(midiPort: port, status: status, data1: data1, data2: data2)
            }
            count += 1
        }
        if count != message.argumentCount { fatalError("read \(count) of \(message.argumentCount) arguments") }
        writer.endMessage()
    case .bundle(let bundle):
        writer.beginBundle(timeTag: bundle.timeTag)
        for element in bundle.elements {
            let slot = writer.beginElement()
            write(element, into: &writer)
            writer.endElement(slot)
        }
    }
}
