import MIDI
import OSCMapping
import Storage

/// Every address a destination's scheme sends, rendered at load (and on reload, with the
/// formatter): for each event kind, input port and channel, the runs of text between the numbers
/// the template takes from the event itself (a note, a controller). Writing an address copies
/// one run, plus one more per number, and writes the numbers; nothing about the template is
/// looked at per event.
struct SentAddresses: ~Copyable {
    /// What one kind's address is made of.
    struct Layout: BitwiseCopyable {
        /// Into ``runs``: the kind's first run for key 0; run `r` for `key` is at
        /// `firstRun + r * keysPerRun + key`.
        var firstRun = 0
        /// Into ``numbers``: the event's numbers between the runs, in order.
        var numbers = OSCByteRange(offset: 0, count: 0)
        /// Whether the address names the port; when not, every port's event has port 0's.
        var usesPort = false
    }

    /// The rendered text of every run, each distinct run stored once.
    let text: FixedBytes
    /// Where each kind's runs are in ``text``, by run and then by port and channel.
    let runs: FixedBuffer<OSCByteRange>
    /// The numbers between runs: `.note` or `.controller`.
    let numbers: FixedBuffer<OSCAddressPlaceholder>
    /// By `MIDIEventKind.rawValue`.
    let layouts: FixedBuffer<Layout>
    /// The input ports the table has addresses for: an event of a port past them, where its
    /// kind's address names the port, is not sent.
    let portCount: Int
    /// The longest address any event can render to.
    let capacity: Int
    private var keysPerRun: Int { portCount &* 16 }

    /// The addresses of every kind `templates` has one for (by `MIDIEventKind.rawValue`), for
    /// input ports named (already sanitised) by `portNames`.
    init(templates: [OSCAddressTemplate?], portNames: [[UInt8]]) {
        let ports = max(portNames.count, 1)
        var text: [UInt8] = []
        var stored: [[UInt8]: OSCByteRange] = [:]
        func store(_ bytes: [UInt8]) -> OSCByteRange {
            if let range = stored[bytes] { return range }
            let range = OSCByteRange(offset: text.count, count: bytes.count)
            text += bytes
            stored[bytes] = range
            return range
        }
        var runs: [OSCByteRange] = []
        var numbers: [OSCAddressPlaceholder] = []
        var layouts = [Layout](repeating: Layout(), count: templates.count)
        var capacity = 1
        for (index, template) in templates.enumerated() {
            guard let template, let kind = MIDIEventKind(rawValue: UInt8(index)) else { continue }
            let numbered = template.placeholders.filter { $0 == .note || $0 == .controller }
            layouts[index] = Layout(
                firstRun: runs.count, numbers: OSCByteRange(offset: numbers.count, count: numbered.count),
                usesPort: template.placeholders.contains { $0 == .port || $0 == .id })
            numbers += numbered
            // Run-major: every key's first run, then every key's second run, ...
            var rendered = [[[UInt8]]](repeating: [], count: ports * 16)
            for port in 0..<ports {
                for channel in 0..<16 {
                    let name = port < portNames.count ? portNames[port] : Array(String(port).utf8)
                    rendered[port * 16 + channel] = Self.runs(
                        of: template, kind: kind, port: port, portName: name, channel: channel)
                }
            }
            for run in 0...numbered.count {
                for key in rendered.indices { runs.append(store(rendered[key][run])) }
            }
            for key in rendered.indices {
                capacity = max(capacity, rendered[key].reduce(0) { $0 + $1.count } + 5 * numbered.count)
            }
        }
        self.text = .frozen(text)
        self.runs = .frozen(runs)
        self.numbers = .frozen(numbers)
        self.layouts = .frozen(layouts)
        portCount = ports
        self.capacity = capacity
    }

    /// `template` for one port and channel, cut where a note or a controller goes.
    private static func runs(
        of template: OSCAddressTemplate, kind: MIDIEventKind, port: Int, portName: [UInt8], channel: Int
    ) -> [[UInt8]] {
        var runs: [[UInt8]] = [[]]
        for segment in template.segments {
            switch segment {
            case .literal(let bytes): runs[runs.count - 1] += bytes
            case .placeholder(.port): runs[runs.count - 1] += portName
            case .placeholder(.id): runs[runs.count - 1] += Array(String(port).utf8)
            case .placeholder(.channel): runs[runs.count - 1] += Array(String(channel + 1).utf8)
            case .placeholder(.channel0): runs[runs.count - 1] += Array(String(channel).utf8)
            case .placeholder(.type): runs[runs.count - 1] += Array(kind.description.utf8)
            case .placeholder(.note), .placeholder(.controller): runs.append([])
            }
        }
        return runs
    }

    /// Writes the address for `event` at `start`, which has room for ``capacity`` bytes, and
    /// returns its length; nil for an event of a port past ``portCount`` (see there).
    @inline(__always)
    func render(_ event: MIDIEvent, into start: UnsafeMutableRawPointer) -> Int? {
        let layout = layouts[Int(event.kind.rawValue)]
        let port = layout.usesPort ? Int(event.port) : 0
        guard port < portCount else { return nil }
        let key = port &* 16 &+ Int(event.channel & 0x0F)
        var run = layout.firstRun &+ key
        var count = 0
        copy(runs[run], to: start, at: &count)
        var i = layout.numbers.offset
        let end = i &+ layout.numbers.count
        while i < end {
            let number =
                numbers[i] == .note || event.kind == .controlChange ? Int64(event.data1 & 0x7F) : Int64(event.parameter)
            writeDecimal(number, to: start, at: &count)
            run &+= keysPerRun
            copy(runs[run], to: start, at: &count)
            i &+= 1
        }
        return count
    }

    @inline(__always)
    private func copy(_ range: OSCByteRange, to start: UnsafeMutableRawPointer, at count: inout Int) {
        (start + count).copyMemory(from: text.baseAddress + range.offset, byteCount: range.count)
        count &+= range.count
    }
}

// MARK: What compiled addresses are made of

// Shared with the mapping rules' addresses (``OSCMappingTables``): runs into byte stores,
// arrays frozen into fixed buffers, and decimals written without building a string.

/// A run of bytes in one of the tables' byte stores.
struct OSCByteRange: BitwiseCopyable {
    var offset: Int
    var count: Int
}

extension FixedBuffer {
    /// A buffer of exactly `array`'s elements.
    static func frozen(_ array: [Element]) -> FixedBuffer<Element> {
        FixedBuffer(count: array.count) { array[$0] }
    }
}

extension FixedBytes {
    /// A copy of `bytes`, 16-byte aligned.
    static func frozen(_ bytes: [UInt8]) -> FixedBytes { FixedBytes(copying: bytes) }
}

/// Writes `value` in decimal at `start + offset` and advances `offset` past it.
@inline(__always)
func writeDecimal(_ value: Int64, to start: UnsafeMutableRawPointer, at offset: inout Int) {
    if value < 0 {
        start.storeBytes(of: UInt8(ascii: "-"), toByteOffset: offset, as: UInt8.self)
        offset &+= 1
    }
    var divisor: UInt64 = 1
    let magnitude = value.magnitude
    while divisor <= magnitude / 10 { divisor &*= 10 }
    var rest = magnitude
    while divisor > 0 {
        start.storeBytes(
            of: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest / divisor), toByteOffset: offset, as: UInt8.self)
        rest %= divisor
        divisor /= 10
        offset &+= 1
    }
}
