import OSC
import Testing

/// A named packet, so parameterised tests say which shape failed.
struct Shape: Sendable, CustomTestStringConvertible {
    let name: String
    let packet: OSCPacket
    var testDescription: String { name }

    init(_ name: String, _ packet: OSCPacket) {
        self.name = name
        self.packet = packet
    }

    init(_ name: String, _ address: String, _ arguments: [OSCArgument]) {
        self.init(name, .message(OSCMessage(address, arguments)))
    }
}

/// Every message and bundle shape the encoder and decoder are checked against liblo with.
let shapes: [Shape] = {
    var list: [Shape] = [
        Shape("no arguments", "/empty", []),
        Shape("root address", "/", []),
        Shape("int32", "/i", [.int32(60)]),
        Shape("int32 extremes", "/i", [.int32(.min), .int32(.max), .int32(-1), .int32(0)]),
        Shape("float32", "/f", [.float32(0.5)]),
        Shape("float32 specials", "/f", [.float32(-0.0), .float32(.infinity), .float32(.leastNonzeroMagnitude)]),
        Shape("string", "/s", [.string("hello")]),
        Shape("UTF-8 string", "/s", [.string("héllo ♪ 音")]),
        Shape("long string", "/s", [.string(String(repeating: "long ", count: 60))]),
        Shape("blob", "/b", [.blob([1, 2, 3, 4, 5, 6, 7, 8, 9])]),
        Shape("int64", "/h", [.int64(.min), .int64(.max), .int64(0x0102_0304_0506_0708)]),
        Shape("double", "/d", [.double(3.141592653589793), .double(-.infinity)]),
        Shape("time tag argument", "/t", [.timeTag(OSCTimeTag(seconds: 0xE000_0000, fraction: 0x8000_0001))]),
        Shape("immediately as argument", "/t", [.timeTag(.immediately)]),
        Shape("true", "/T", [.true]),
        Shape("false", "/F", [.false]),
        Shape("nil", "/N", [.nil]),
        Shape("impulse", "/I", [.impulse]),
        Shape("midi", "/m", [.midi(port: 0, status: 0x90, data1: 60, data2: 100)]),
        Shape(
            "every type", "/every/type",
            [
                .int32(1), .float32(2), .string("three"), .blob([4]), .int64(5), .double(6),
                .timeTag(OSCTimeTag(seconds: 7, fraction: 8)), .true, .false, .nil, .impulse,
                .midi(port: 1, status: 0xB0, data1: 7, data2: 127),
            ]),
        Shape("data-less arguments only", "/flags", [.true, .false, .nil, .impulse, .true]),
        Shape("note on", "/midi/note_on", [.int32(1), .int32(60), .int32(100)]),
        Shape(
            "strings and ints mixed", "/mix", [.string("a"), .int32(1), .string("bcde"), .float32(1.5), .string("")]),
    ]
    for length in 0...7 {
        let text = String(repeating: "x", count: length)
        list.append(Shape("string of \(length) bytes", "/s", [.string(text)]))
        list.append(Shape("address of \(length + 2) bytes", "/a" + text, [.int32(Int32(length))]))
    }
    for length in 0...5 {
        list.append(Shape("blob of \(length) bytes", "/b", [.blob((0..<length).map { UInt8($0 + 0xA0) })]))
    }
    for count in 1...6 {
        list.append(Shape("\(count) int32s", "/ints", (0..<count).map { .int32(Int32($0)) }))
    }
    let note = OSCPacket.message(OSCMessage("/note", [.int32(60), .float32(0.25)]))
    let later = OSCTimeTag(seconds: 0xEA00_0000, fraction: 0x4000_0000)
    list += [
        Shape("empty bundle", .bundle(OSCBundle(timeTag: .immediately))),
        Shape("bundle with one message", .bundle(OSCBundle(timeTag: later, [note]))),
        Shape(
            "bundle with several messages",
            .bundle(
                OSCBundle(
                    timeTag: .immediately,
                    [
                        note, .message(OSCMessage("/empty")),
                        .message(OSCMessage("/s", [.string("abc"), .blob([1, 2])])),
                        .message(
                            OSCMessage(
                                "/every",
                                [.int64(-2), .double(0.1), .true, .midi(port: 0, status: 0x80, data1: 1, data2: 2)])),
                    ]))),
        Shape(
            "nested bundle",
            .bundle(OSCBundle(timeTag: later, [note, .bundle(OSCBundle(timeTag: .immediately, [note])), note]))),
        Shape(
            "bundle nested three deep",
            .bundle(
                OSCBundle(
                    timeTag: .immediately,
                    [.bundle(OSCBundle(timeTag: later, [.bundle(OSCBundle(timeTag: .immediately, [note]))]))]))),
        Shape("bundle holding only an empty bundle", .bundle(OSCBundle(timeTag: later, [.bundle(OSCBundle())]))),
    ]
    return list
}()
