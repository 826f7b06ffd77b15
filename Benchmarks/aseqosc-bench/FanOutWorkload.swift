import Glibc
import MIDI
import MIDIOSC
import OSCTransport
import Pipeline

/// One route fanning out to `destinations` OSC/UDP destinations, as the pipeline thread runs
/// it (`RouteRuntime.run`, `MIDIToOSCWorker`): a forward-only route, each output formatted
/// (default scheme) straight into the `UDPSender` batch slot, a flush every `flushEvery` events
/// and at the end; the packets really go to loopback sockets bound here (never read: the
/// kernel drops what does not fit, and the sends still succeed).
final class FanOutWorkload {
    let events: Int
    let destinations: Int
    let flushEvery: Int
    private let route: Route
    private let formatters: [OSCEventFormatter]
    private let hotFormatters: UnsafeMutableBufferPointer<OSCEventFormatter.Unretained>
    private let targets: UnsafeMutableBufferPointer<Int>
    private let sender: UDPSender
    private let receivers: [Int32]
    private let input: UnsafeMutableBufferPointer<MIDIEvent>

    /// `events` input events (notes on and off, controllers) to `destinations` destinations.
    init(destinations: Int, events: Int, flushEvery: Int) {
        self.events = events
        self.destinations = destinations
        self.flushEvery = flushEvery
        route = Route(inputPorts: PortSet([0]), chain: Chain([], destinations: Array(0..<destinations)))
        formatters = (0..<destinations).map { _ in OSCEventFormatter(scheme: .default, portNames: ["keyboard"]) }
        hotFormatters = .allocate(capacity: destinations)
        _ = hotFormatters.initialize(from: formatters.map(\.unretained))
        targets = .allocate(capacity: destinations)
        _ = targets.initialize(from: route.forwardingDestinations ?? [])
        var bound: [Int32] = []
        var resolved: [ResolvedOSCDestination] = []
        for _ in 0..<destinations {
            let (descriptor, port) = Self.bindLoopback()
            bound.append(descriptor)
            resolved.append(try! OSCDestination(parsing: "127.0.0.1:\(port)").resolve())
        }
        receivers = bound
        sender = try! UDPSender(destinations: resolved)
        input = .allocate(capacity: events)
        var i = 0
        while i < events {
            let note = UInt8(36 + i % 48)
            switch i % 4 {
            case 0: input[i] = .noteOn(channel: UInt8(i % 16), note: note, velocity: 100)
            case 1: input[i] = .controlChange(channel: UInt8(i % 16), controller: 1, value: UInt8(i % 128))
            case 2: input[i] = .noteOff(channel: UInt8((i - 2) % 16), note: UInt8(36 + (i - 2) % 48))
            default: input[i] = .controlChange(channel: UInt8(i % 16), controller: 7, value: UInt8(127 - i % 128))
            }
            i += 1
        }
    }

    deinit {
        hotFormatters.deallocate()
        targets.deallocate()
        input.deallocate()
        for descriptor in receivers { close(descriptor) }
    }

    /// Runs every event to every destination; returns the packets the sender counted.
    func run() -> Int {
        let formatters = hotFormatters.baseAddress.unsafelyUnwrapped
        let destinations = targets.baseAddress.unsafelyUnwrapped
        let count = targets.count
        var i = 0
        while i < events {
            var output = input[i]
            if route.forward(&output) == .send {
                var index = 0
                while index < count {
                    let destination = destinations[index]
                    let size = formatters[destination].write(output, into: sender.nextSlot())
                    if size > 0 { sender.commit(size, to: destination) }
                    index &+= 1
                }
            }
            i += 1
            if i % flushEvery == 0 {
                sender.flush()
                route.publishForwarded()
            }
        }
        sender.flush()
        route.publishForwarded()
        return sender.statistics.packetsSent(to: 0)
    }

    private static func bindLoopback() -> (Int32, Int) {
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
}
