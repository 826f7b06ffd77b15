import CLiblo
import Glibc
import MIDI
import MIDIToOSC
import OSCMapping
import OSCToMIDI
import OSC
import Pipeline

/// The MIDI -> OSC workload: wire bytes through the parser, a route with typical operators, and
/// an OSC encoder, on one thread, a batch at a time, as the input thread runs it.
final class PipelineWorkload {
    /// Input events per cycle of the byte pattern, and how many of them the route sends on.
    static let cycleEvents = 8
    static let cycleOutputs = 7
    /// Events parsed per batch, as the input thread reads them.
    static let batchEvents = 64

    let events: Int
    private let wire: [UInt8]
    private let batchOffsets: [Int]
    private let route: Route
    private let formatter: OSCEventFormatter
    private let packet = UnsafeMutableRawBufferPointer.allocate(byteCount: 1024, alignment: 16)
    private var parser = MIDIByteParser(port: 0)
    private let liblo: LibloEncoder

    /// `events` input events, rounded up to whole cycles.
    init(events requested: Int) {
        let cycles = (requested + Self.cycleEvents - 1) / Self.cycleEvents
        events = cycles * Self.cycleEvents
        var bytes: [UInt8] = []
        bytes.reserveCapacity(events * 3)
        var cycle = 0
        while cycle < cycles {
            Self.appendCycle(cycle, to: &bytes)
            cycle += 1
        }
        wire = bytes
        // Batch boundaries fall on event boundaries (every event here is 3 bytes).
        var offsets: [Int] = []
        var offset = 0
        while offset < bytes.count {
            offsets.append(offset)
            offset += Self.batchEvents * 3
        }
        offsets.append(bytes.count)
        batchOffsets = offsets
        route = Route(inputPorts: PortSet([0]), chain: Self.chain)
        formatter = OSCEventFormatter(scheme: .default, portNames: ["keyboard"])
        liblo = LibloEncoder(portName: "keyboard")
    }

    deinit {
        packet.deallocate()
    }

    /// Kind filter, transpose, velocity curve, note-off normalisation: what a typical route does.
    static let chain = Chain(
        [
            .kindFilter(KindFilter([.noteOn, .noteOff, .controlChange])),
            .transpose(Transpose(semitones: 12)),
            .velocity(VelocityCurve(.gamma(0.8))),
            .normaliseNoteOffs(.noteOff),
        ], destinations: [0])

    /// Eight events a keyboard with a mod wheel might send: two notes held and released (one by
    /// note-off, one by note-on velocity 0), control changes, and a pitch bend the kind filter drops.
    private static func appendCycle(_ cycle: Int, to bytes: inout [UInt8]) {
        let channel = UInt8(cycle % 16)
        let noteA = UInt8(36 + cycle % 48)
        let noteB = UInt8(40 + (cycle * 7) % 48)
        let value = UInt8(cycle % 128)
        bytes += [0x90 | channel, noteA, 1 + UInt8(cycle % 127)]
        bytes += [0xB0 | channel, 1, value]
        bytes += [0x90 | channel, noteB, 100]
        bytes += [0xE0 | channel, value, 0x40]
        bytes += [0x80 | channel, noteA, 64]
        bytes += [0xB0 | channel, 7, 127 - value]
        bytes += [0x90 | channel, noteB, 0]
        bytes += [0xB0 | channel, 1, value / 2]
    }

    /// Runs every event through the pipeline, encoding with aseqosc's ``OSCEventFormatter``.
    func runAseqosc() -> Int {
        var writer = OSCWriter(packet)
        var checksum = 0
        run { event in
            writer.reset()
            if formatter.write(event, into: &writer) {
                checksum &+= writer.count &+ Int(packet[writer.count - 1])
            }
        }
        return checksum
    }

    /// Runs every event through the same pipeline, building the OSC message with liblo.
    func runLiblo() -> Int {
        var checksum = 0
        run { event in
            let size = liblo.encode(event, into: packet)
            if size > 0 { checksum &+= size &+ Int(packet[size - 1]) }
        }
        return checksum
    }

    private func run(_ encode: (MIDIEvent) -> Void) {
        var batch = 0
        while batch + 1 < batchOffsets.count {
            let start = batchOffsets[batch]
            let end = batchOffsets[batch + 1]
            wire.withUnsafeBytes { bytes in
                parser.parse(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), timestamp: UInt64(batch)) {
                    route.process($0, now: $0.timestamp) { output, _ in encode(output) }
                }
            }
            batch += 1
        }
    }

    /// The route's outputs for the whole input, for the encode-only comparison.
    func outputs() -> [MIDIEvent] {
        var result: [MIDIEvent] = []
        result.reserveCapacity(events)
        let copy = Route(inputPorts: PortSet([0]), chain: Self.chain)
        var copyParser = MIDIByteParser(port: 0)
        wire.withUnsafeBytes { bytes in
            copyParser.parse(bytes) { event in
                copy.process(event, now: 0) { output, _ in result.append(output) }
            }
        }
        return result
    }

    /// Encodes `events` with aseqosc's formatter.
    func encodeAseqosc(_ events: [MIDIEvent]) -> Int {
        var writer = OSCWriter(packet)
        var checksum = 0
        var i = 0
        while i < events.count {
            writer.reset()
            if formatter.write(events[i], into: &writer) {
                checksum &+= writer.count &+ Int(packet[writer.count - 1])
            }
            i += 1
        }
        return checksum
    }

    /// Encodes `events` with liblo.
    func encodeLiblo(_ events: [MIDIEvent]) -> Int {
        var checksum = 0
        var i = 0
        while i < events.count {
            let size = liblo.encode(events[i], into: packet)
            if size > 0 { checksum &+= size &+ Int(packet[size - 1]) }
            i += 1
        }
        return checksum
    }
}

/// The baseline encoder: the same messages as the default scheme (address and `ii` arguments),
/// built the way a liblo program builds them: `lo_message_new`, `lo_message_add_int32` per
/// argument, `lo_message_serialise` into a buffer, `lo_message_free`. Addresses are rendered
/// once per (kind, channel) up front, so only liblo's message building is measured.
final class LibloEncoder {
    // Indexed by kind raw value * 16 + channel; nil for kinds this workload does not send.
    private var addresses: [UnsafeMutablePointer<CChar>?]

    init(portName: String) {
        let kinds = MIDIEventKind.allCases.count
        addresses = Array(repeating: nil, count: kinds * 16)
        let names: [(MIDIEventKind, String)] = [(.noteOn, "note_on"), (.noteOff, "note_off"), (.controlChange, "cc")]
        for (kind, name) in names {
            for channel in 0..<16 {
                addresses[Int(kind.rawValue) * 16 + channel] = strdup("/midi/\(portName)/\(channel + 1)/\(name)")
            }
        }
    }

    deinit {
        for address in addresses { free(address) }
    }

    /// Writes the message for `event` into `buffer`; returns its size (0: not sent).
    func encode(_ event: MIDIEvent, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let address = addresses[Int(event.kind.rawValue) * 16 + Int(event.channel & 15)] else { return 0 }
        guard let message = lo_message_new() else { return 0 }
        lo_message_add_int32(message, Int32(event.data1))
        lo_message_add_int32(message, Int32(event.data2))
        // The messages here are under 64 bytes and the buffer holds 1024, so no length check first
        // (lo_message_serialise computes the length itself and trusts the buffer).
        var size = 0
        lo_message_serialise(message, address, buffer.baseAddress, &size)
        lo_message_free(message)
        return size
    }
}
