import MIDI
import OSC
import Testing

@testable import MIDIToOSC
@testable import OSCMapping
@testable import OSCToMIDI

/// The formatter's two entry points (an ``OSCWriter``, a raw buffer) at the edges: every
/// scheme and placeholder in a buffer just big enough and one byte short, many named ports,
/// bundles, a writer left with a message open.
@Suite struct FormatterBufferTests {
    /// Names include a long one and one that sanitises; ports 3 and up are past the names.
    static let names = [
        "Midi Through Port-0", "KeyStep Pro", String(repeating: "A Very Long Port Name ", count: 12),
    ]

    /// Every placeholder, every style and fields of every sort, some kinds left out.
    static let mixed = try! OSCScheme([
        "note_on": ("/n/{port}/{channel}/{note}", [.note, .velocity, .channel, .port], .float),
        "note_off": ("/{type}/{id}", [.data1, .data2, .status], .int),
        "poly_pressure": ("/pp", [.note, .pressure], .midi),
        "control_change": ("/cc/{controller}/{channel0}", [.controller, .value], .int),
        "program_change": ("/{port}", [.program], .touchOSCMIDI),
        "channel_pressure": ("/cp/{channel}", [.dataBytes], .int),
        "pitch_bend": ("/pb/{port}/{channel}", [.bend, .value, .data1, .data2], .float),
        "control_change14": ("/c14/{controller}", [.controller, .value], .float),
        "rpn": ("/rpn/{channel}/{type}", [.value, .channel0], .int),
        "nrpn": ("/nrpn", [], .blob),
        "mtc_quarter_frame": ("/mtc/{id}", [.value], .float),
        "song_position": ("/sp/{port}", [.value, .data1, .data2], .int),
        "song_select": ("/ss", [.value], .blob),
        "tune_request": ("/{type}", [], .float),
        "clock": ("/{port}/{type}", [.status], .midi),
        "start": ("/s/{id}/{port}", [.port], .touchOSCMIDI),
        "sysex": ("/sx/{port}", [.dataBytes, .port], .float),
    ])

    /// `m` for every kind (the assembled kinds and SysEx cannot be sent so), osmid port names.
    static let allMIDI = try! OSCScheme(
        Dictionary(
            uniqueKeysWithValues: MIDIEventKind.allCases.map {
                ($0.description, (address: "/m/{port}/{type}", arguments: [OSCArgumentField](), style: .midi))
            }),
        portNameStyle: .osmid)

    static let schemes: [(String, OSCScheme)] = [
        ("default", .default), ("osmid", .osmid), ("touchosc", .touchOSC), ("mixed", mixed), ("all midi", allMIDI),
    ]

    /// Several events of every kind: extreme and out-of-range values, channels with stray high
    /// bits, and ports with a name, past the names, and at the top of the range.
    static func events() -> [MIDIEvent] {
        let values: [(data1: UInt8, data2: UInt8, value: Int32, parameter: UInt16)] = [
            (0, 0, -8192, 0), (60, 100, 0, 7), (127, 127, 8191, 1000), (200, 255, 16383, 16383), (1, 64, 20000, 31),
        ]
        let ports: [UInt16] = [0, 1, 2, 3, 300, 65535]
        let channels: [UInt8] = [0, 5, 15, 0x1A]
        var events: [MIDIEvent] = []
        for kind in MIDIEventKind.allCases {
            for port in ports {
                for channel in channels {
                    for (data1, data2, value, parameter) in values {
                        events.append(
                            MIDIEvent(
                                kind, channel: channel, data1: data1, data2: data2, value: value,
                                parameter: parameter, sysex: kind == .sysex ? identityRequestReference : .none,
                                port: port))
                    }
                }
            }
        }
        events.append(MIDIEvent(.sysex, sysex: .none))
        return events
    }

    @Test func everyNamedPortSendsItsNameAndThePortsPastThemNothing() {
        let names = (0..<40).map { "Port number \($0)" }
        let formatter = OSCEventFormatter(scheme: .default, portNames: names)
        for port in 0..<42 {
            for kind in [MIDIEventKind.noteOn, .clock] {
                let event = MIDIEvent(kind, channel: 9, data1: 61, data2: 99, port: UInt16(port))
                let name = "Port_number_\(port)"
                let expected =
                    port >= 40
                    ? nil
                    : kind == .noteOn
                        ? libloBytes("/midi/\(name)/10/note_on", [.i(61), .i(99)])
                        : libloBytes("/midi/\(name)/clock", [])
                #expect(Self.written(event, formatter) == expected)
                #expect(Self.raw(event, formatter) == expected)
            }
        }
    }

    @Test(arguments: schemes.map(\.0))
    func aMessageOneByteTooBigForTheBufferIsNotWritten(_ name: String) throws {
        let scheme = try #require(Self.schemes.first { $0.0 == name }?.1)
        let formatter = OSCEventFormatter(scheme: scheme, portNames: Self.names, sysex: sysexStore)
        for event in Self.events() where event.port < 4 && event.channel == 5 {
            guard let bytes = Self.written(event, formatter) else { continue }
            #expect(Self.written(event, formatter, capacity: bytes.count) == bytes)
            #expect(Self.raw(event, formatter, capacity: bytes.count) == bytes)
            #expect(Self.written(event, formatter, capacity: bytes.count - 1) == nil)
            #expect(Self.raw(event, formatter, capacity: bytes.count - 1) == nil)
        }
    }

    @Test func messagesGoIntoABundleAfterWhatIsThere() throws {
        let formatter = OSCEventFormatter(scheme: .default, portNames: Self.names)
        let events = [MIDIEvent(.noteOn, channel: 3, data1: 60, data2: 1, port: 1), MIDIEvent(.clock, port: 1)]
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 4)
        defer { buffer.deallocate() }
        var writer = OSCWriter(buffer)
        writer.beginBundle(timeTag: .immediately)
        var messages: [[UInt8]] = []
        for event in events {
            let element = writer.beginElement()
            let start = writer.count
            #expect(formatter.write(event, into: &writer))
            messages.append(Array(buffer[start..<writer.count]))
            writer.endElement(element)
        }
        #expect(try writer.finish() == 16 + (4 + 28 + 4 + 8) + (4 + 24 + 4))
        #expect(messages == events.map { Self.written($0, formatter) })
    }

    @Test func aWriterWithAMessageOpenIsNotWrittenTo() {
        let formatter = OSCEventFormatter(scheme: .default, portNames: Self.names)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 4)
        defer { buffer.deallocate() }
        var writer = OSCWriter(buffer)
        writer.beginMessage(address: "/open", argumentCount: 1)
        let before = writer.count
        #expect(!formatter.write(MIDIEvent(.clock), into: &writer))
        #expect(writer.count == before)
        #expect(writer.failure == .messageNotEnded)
    }

    // MARK: The two entry points

    static func written(_ event: MIDIEvent, _ formatter: OSCEventFormatter, capacity: Int = 4096) -> [UInt8]? {
        withWriter(capacity) { formatter.write(event, into: &$0) }
    }

    static func raw(_ event: MIDIEvent, _ formatter: OSCEventFormatter, capacity: Int = 4096) -> [UInt8]? {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 4)
        defer { buffer.deallocate() }
        let size = formatter.write(event, into: buffer)
        return size == 0 ? nil : Array(buffer.prefix(size))
    }

    private static func withWriter(_ capacity: Int, _ write: (inout OSCWriter) -> Bool) -> [UInt8]? {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 4)
        defer { buffer.deallocate() }
        var writer = OSCWriter(buffer)
        guard write(&writer), let size = try? writer.finish() else { return nil }
        return Array(buffer.prefix(size))
    }
}
