import Endpoints
import Glibc
import MIDI
import MIDIToOSC
import OSCMapping
import OSCToMIDI
import OSCTransport
import Pipeline

/// `routes` routes, each fanning out to `destinations` OSC/UDP destinations, as the input
/// thread runs them (`RouteRunner`, `RouteRuntime.run`): each route runs `operators`
/// operators (none: it forwards), each output is formatted (default scheme) straight into the
/// route's `OSCSender` batch slot (a SysEx too long for a slot through a packet buffer, sent on
/// its own), a flush of every sender every `flushEvery` events and at the end. The packets
/// really go to loopback sockets bound here (never read: the kernel drops what does not fit,
/// and the sends still succeed). With `sysexBytes` > 0 every event is a SysEx message of that
/// many bytes (F0 and F7 included), stored as the input thread stores one and released after
/// the routes ran it, as the worker does.
final class FanOutWorkload {
    let events: Int
    let destinations: Int
    let flushEvery: Int
    private let routes: [RouteUnderTest]
    private let input: UnsafeMutableBufferPointer<MIDIEvent>
    private let sysexStore: SysExStore
    private let sysexMessage: [UInt8]
    private let packet = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_507, alignment: 16)

    /// `events` input events (notes on and off, controllers; or SysEx messages) through
    /// `routes` routes of `operators` operators to `destinations` destinations each.
    init(
        destinations: Int, events: Int, flushEvery: Int, routes routeCount: Int = 1, operators: Int = 0,
        sysexBytes: Int = 0
    ) {
        self.events = events
        self.destinations = destinations
        self.flushEvery = flushEvery
        let chain = Chain(Self.operators(operators), destinations: Array(0..<destinations))
        let store = SysExStore(slots: 16, capacity: 65_536)
        sysexStore = store
        routes = (0..<routeCount).map { _ in RouteUnderTest(chain: chain, destinations: destinations, sysex: store) }
        sysexMessage = sysexBytes >= 2 ? [0xF0] + (0..<(sysexBytes - 2)).map { UInt8($0 % 128) } + [0xF7] : []
        input = .allocate(capacity: events)
        var i = 0
        while i < events {
            let note = UInt8(36 + i % 48)
            switch sysexBytes >= 2 ? -1 : i % 4 {
            case -1: input[i] = MIDIEvent(.sysex)
            case 0: input[i] = .noteOn(channel: UInt8(i % 16), note: note, velocity: 100)
            case 1: input[i] = .controlChange(channel: UInt8(i % 16), controller: 1, value: UInt8(i % 128))
            case 2: input[i] = .noteOff(channel: UInt8((i - 2) % 16), note: UInt8(36 + (i - 2) % 48))
            default: input[i] = .controlChange(channel: UInt8(i % 16), controller: 7, value: UInt8(127 - i % 128))
            }
            i += 1
        }
    }

    deinit {
        input.deallocate()
        packet.deallocate()
    }

    /// `count` operators that keep every event of this workload and each do some work, cycling
    /// through five kinds a route typically has (the transposes alternate up and down).
    static func operators(_ count: Int) -> [Operator] {
        (0..<count).map { i in
            switch i % 5 {
            case 0: .kindFilter(KindFilter([.noteOn, .noteOff, .controlChange, .sysex]))
            case 1: .transpose(Transpose(semitones: (i / 5) % 2 == 0 ? 1 : -1))
            case 2: .velocity(VelocityCurve(.gamma(0.8)))
            case 3: .channelFilter(ChannelFilter(Array(0..<16)))
            default: .controllerMap(ControllerMap([(from: 1, to: 7), (from: 7, to: 1)]))
            }
        }
    }

    /// Runs every event through every route; returns the packets the first sender counted.
    func run() -> Int {
        if routes.count == 1 {
            let route = routes[0]
            forEachEvent { event in route.run(event, packet: packet) }
        } else {
            forEachEvent { event in
                var index = 0
                while index < routes.count {
                    routes[index].run(event, packet: packet)
                    index &+= 1
                }
            }
        }
        return routes[0].sender.statistics.packetsSent(to: 0)
    }

    /// Calls `body` with each input event (a SysEx one stored first, released after), flushing
    /// every `flushEvery` events and at the end.
    @inline(__always)
    private func forEachEvent(_ body: (MIDIEvent) -> Void) {
        let sysex = !sysexMessage.isEmpty
        var i = 0
        while i < events {
            var event = input[i]
            if sysex {
                if let reference = sysexMessage.withUnsafeBytes({ sysexStore.store($0) }) { event.sysex = reference }
                body(event)
                sysexStore.release(event.sysex)
            } else {
                body(event)
            }
            i += 1
            if i % flushEvery == 0 { flushAll() }
        }
        flushAll()
    }

    private func flushAll() {
        var index = 0
        while index < routes.count {
            routes[index].sender.flush()
            index &+= 1
        }
    }

    /// One route with its formatters, sender and sockets, as `RouteRuntime` holds them.
    private final class RouteUnderTest {
        let route: Route
        private let formatters: [OSCEventFormatter]
        let sender: OSCSender
        private let receivers: [Int32]

        init(chain: Chain, destinations: Int, sysex: SysExStore) {
            route = Route(inputPorts: PortSet([0]), chain: chain)
            formatters = (0..<destinations).map { _ in
                OSCEventFormatter(scheme: .default, portNames: ["keyboard"], sysex: sysex)
            }
            var bound: [Int32] = []
            var resolved: [ResolvedOSCDestination] = []
            for _ in 0..<destinations {
                let (descriptor, port) = bindLoopback()
                bound.append(descriptor)
                resolved.append(try! OSCDestination(parsing: "127.0.0.1:\(port)").resolve())
            }
            receivers = bound
            sender = try! OSCSender(destinations: resolved)
        }

        deinit {
            for descriptor in receivers { close(descriptor) }
        }

        /// `RouteRuntime.run`: the route's `process`, each output sent.
        @inline(__always)
        func run(_ event: MIDIEvent, packet: UnsafeMutableRawBufferPointer) {
            route.process(event, now: event.timestamp) { output, destination in
                send(output, to: destination, packet: packet)
            }
        }

        /// `RouteRuntime.send`: into the batch slot, or a long message through `packet`.
        @inline(__always)
        private func send(_ event: MIDIEvent, to destination: Int, packet: UnsafeMutableRawBufferPointer) {
            let formatter = formatters[destination]
            let size = formatter.write(event, into: sender.nextSlot())
            if size > 0 {
                sender.commit(size, to: destination)
                return
            }
            let long = formatter.write(event, into: packet)
            if long > 0 { sender.queue(UnsafeRawBufferPointer(rebasing: packet[0..<long]), to: destination) }
        }
    }
}

private func bindLoopback() -> (Int32, Int) {
    let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    precondition(descriptor >= 0, "socket")
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
    }
    precondition(bound == 0, "bind")
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
}
