import MIDI
import OSCMapping
import Storage

/// Renders addresses from compiled templates: literals, port names and kind names are runs of
/// one byte store, so rendering copies bytes and writes digits.
package struct OSCAddressRenderer: ~Copyable {
    let segments: FixedBuffer<OSCCompiledSegment>
    /// Sanitised port names, kind names and template literals.
    let text: FixedBytes
    let portNames: FixedBuffer<OSCByteRange>
    let typeNames: FixedBuffer<OSCByteRange>
    /// The longest address any event can render to.
    let capacity: Int

    /// Writes the address for `event` at `start`, which has room for `capacity` bytes.
    func render(_ range: OSCByteRange, _ event: MIDIEvent, into start: UnsafeMutableRawPointer) -> Int {
        var count = 0
        var i = range.offset
        while i < range.offset + range.count {
            switch segments[i] {
            case .literal(let literal): copy(literal, to: start, at: &count)
            case .placeholder(let placeholder):
                switch placeholder {
                case .port:
                    let port = Int(event.port)
                    if port < portNames.count {
                        copy(portNames[port], to: start, at: &count)
                    } else {
                        writeDecimal(Int64(port), to: start, at: &count)
                    }
                case .id: writeDecimal(Int64(event.port), to: start, at: &count)
                case .channel: writeDecimal(Int64(event.channel & 0x0F) + 1, to: start, at: &count)
                case .channel0: writeDecimal(Int64(event.channel & 0x0F), to: start, at: &count)
                case .type: copy(typeNames[Int(event.kind.rawValue)], to: start, at: &count)
                case .note: writeDecimal(Int64(event.data1 & 0x7F), to: start, at: &count)
                case .controller:
                    let controller = event.kind == .controlChange ? Int(event.data1 & 0x7F) : Int(event.parameter)
                    writeDecimal(Int64(controller), to: start, at: &count)
                }
            }
            i += 1
        }
        return count
    }

    @inline(__always)
    private func copy(_ range: OSCByteRange, to start: UnsafeMutableRawPointer, at count: inout Int) {
        (start + count).copyMemory(from: text.baseAddress + range.offset, byteCount: range.count)
        count += range.count
    }
}
