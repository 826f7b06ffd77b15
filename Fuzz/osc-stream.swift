// libFuzzer target: a TCP byte stream through OSCStreamDeframer (capacity 256), fed whole and in
// chunks of random sizes (chosen by the input's first byte, so a run is reproducible).
//
// Checks: chunked feeding hands on the same packets and stops with the same error as one whole
// buffer; every packet is non-empty and within the capacity; nothing is handed on after an
// error; and the packets, framed again in the stream's framing, deframe to themselves.
@testable import OSC

let capacity = 256

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    var random = SplitMix64(seed: UInt64(data[0]))
    let stream = UnsafeRawBufferPointer(start: data + 1, count: size - 1)

    let whole = deframe(stream) { remaining in remaining }
    let chunked = deframe(stream) { remaining in 1 + Int(random.next() % UInt64(min(remaining, 17))) }
    guard whole.packets == chunked.packets, whole.error == chunked.error else {
        fatalError("chunked deframing differs: \(whole) vs \(chunked)")
    }
    for packet in whole.packets where packet.isEmpty || packet.count > capacity {
        fatalError("a packet of \(packet.count) bytes handed on")
    }
    guard let framing = whole.framing, !whole.packets.isEmpty else { return 0 }
    let again = reframe(whole.packets, framing)
    let back = again.withUnsafeBytes { bytes in deframe(bytes) { $0 } }
    guard back.packets == whole.packets, back.error == nil, back.finish == nil else {
        fatalError("re-framed packets deframe as \(back)")
    }
    return 0
}

struct Result: CustomStringConvertible {
    var packets: [[UInt8]] = []
    var error: OSCStreamError?
    var finish: OSCStreamError?
    var framing: OSCStreamFraming?
    var description: String { "\(packets.count) packets, error \(String(describing: error))" }
}

func deframe(_ stream: UnsafeRawBufferPointer, chunk: (Int) -> Int) -> Result {
    var deframer = OSCStreamDeframer(capacity: capacity)
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    defer { buffer.deallocate() }
    var result = Result()
    var offset = 0
    while offset < stream.count {
        let count = chunk(stream.count - offset)
        let stopped = result.error != nil
        let error = deframer.feed(UnsafeRawBufferPointer(rebasing: stream[offset..<offset + count]), into: buffer) {
            if stopped { fatalError("a packet handed on after an error") }
            result.packets.append(Array($0))
        }
        if let error {
            if let earlier = result.error, earlier != error { fatalError("the error changed: \(earlier), \(error)") }
            result.error = error
        }
        offset += count
    }
    result.finish = deframer.finish()
    result.framing = deframer.framing
    return result
}

func reframe(_ packets: [[UInt8]], _ framing: OSCStreamFraming) -> [UInt8] {
    var bytes: [UInt8] = []
    for packet in packets {
        switch framing {
        case .lengthPrefixed:
            bytes += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: UInt32(packet.count) >> $0) } + packet
        case .slip:
            bytes.append(0xC0)
            for byte in packet {
                switch byte {
                case 0xC0: bytes += [0xDB, 0xDC]
                case 0xDB: bytes += [0xDB, 0xDD]
                default: bytes.append(byte)
                }
            }
            bytes.append(0xC0)
        }
    }
    return bytes
}
