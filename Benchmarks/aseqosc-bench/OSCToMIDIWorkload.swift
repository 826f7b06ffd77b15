import MIDI
import MIDIToOSC
import OSCMapping
import OSCToMIDI
import OSC
import Pipeline

/// The OSC -> MIDI workload: what the bridge's OSC thread does per datagram short of the ALSA
/// write, on o2m's addresses as the end-to-end benchmark sends them (`/*/note_on ,iii` and
/// friends to one output, patterns resolved the general way): validate the packet, translate it,
/// run the route (no operators), count the events the sequencer would get.
final class OSCToMIDIWorkload {
    let events: Int
    private let packets: [UnsafeRawBufferPointer]
    private let translator = OSCToMIDITranslator(outputNames: ["bench"])
    private let route = Route(inputPorts: .all, chain: Chain([], destinations: [0]))

    init(events: Int) {
        self.events = events
        // note-on, control change, note-off, as Benchmarks/e2e/loadgen.c cycles them.
        let messages: [OSCMessage] = (0..<48).map { i in
            let note = Int32(36 + i % 48)
            switch i % 3 {
            case 0: return OSCMessage("/*/note_on", [.int32(1), .int32(note), .int32(Int32(1 + i % 127))])
            case 1: return OSCMessage("/*/control_change", [.int32(1), .int32(1), .int32(Int32(i % 128))])
            default: return OSCMessage("/*/note_off", [.int32(1), .int32(note), .int32(64)])
            }
        }
        packets = messages.map { message in
            let bytes = try! message.serialize()
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
            copy.copyBytes(from: bytes)
            return UnsafeRawBufferPointer(copy)
        }
    }

    deinit {
        for packet in packets { packet.deallocate() }
    }

    func run() -> Int {
        var sent = 0
        var i = 0
        while i < events {
            let datagram = packets[i % packets.count]
            if case .message(let message)? = try? OSCPacketView(datagram) {
                _ = translator.translate(message, timestamp: UInt64(i)) { event in
                    route.process(event, now: UInt64(i)) { output, _ in sent &+= Int(output.data2) }
                }
            }
            i += 1
        }
        return sent
    }
}
