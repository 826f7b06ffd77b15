import OSC
import Testing

/// Runs `write` on a writer over `capacity` bytes that sit inside a larger buffer filled with a
/// canary, and returns the writer's outcome and whether anything past `capacity` changed.
private func write(
    capacity: Int, _ write: (inout OSCWriter) -> Void
) -> (result: Result<[UInt8], OSCWriteError>, overran: Bool) {
    let canary: UInt8 = 0xA5
    var storage = [UInt8](repeating: canary, count: capacity + 64)
    let result: Result<[UInt8], OSCWriteError> = storage.withUnsafeMutableBytes { all in
        var writer = OSCWriter(UnsafeMutableRawBufferPointer(rebasing: all[0..<capacity]))
        write(&writer)
        do throws(OSCWriteError) {
            let size = try writer.finish()
            return .success(Array(all[0..<size]))
        } catch {
            return .failure(error)
        }
    }
    return (result, storage[capacity...].contains { $0 != canary })
}

@Suite("Writer")
struct WriterTests {
    @Test(arguments: shapes)
    func everyBufferSmallerThanThePacketFailsWithoutWritingPastItsEnd(shape: Shape) throws {
        let expected = try shape.packet.serialize()
        for capacity in 0..<expected.count {
            let (result, overran) = write(capacity: capacity) { shape.packet.write(to: &$0) }
            #expect(throws: OSCWriteError.bufferTooSmall) { try result.get() }
            #expect(!overran, "wrote past a \(capacity)-byte buffer")
        }
        let (result, overran) = write(capacity: expected.count) { shape.packet.write(to: &$0) }
        #expect(try result.get() == expected)
        #expect(!overran)
    }

    @Test func declaredTypeTagsAndCountedArgumentsWriteTheSameBytes() throws {
        let expected = try OSCMessage("/note_on", [.int32(1), .float32(0.5), .string("hi"), .true]).serialize()
        let declared = write(capacity: 64) { writer in
            writer.beginMessage(address: "/note_on", typeTags: "ifsT")
            writer.append(int32: 1)
            writer.append(float32: 0.5)
            writer.append(string: "hi")
            writer.append(bool: true)
            writer.endMessage()
        }
        let counted = write(capacity: 64) { writer in
            writer.beginMessage(address: String("/note_on"), argumentCount: 4)
            writer.append(int32: 1)
            writer.append(float32: 0.5)
            writer.append(string: String("hi"))
            writer.append(bool: true)
            writer.endMessage()
        }
        #expect(try declared.result.get() == expected)
        #expect(try counted.result.get() == expected)
    }

    @Test func writerBuildsNestedBundlesLikeTheOwnedValue() throws {
        let inner = OSCBundle(timeTag: OSCTimeTag(seconds: 1, fraction: 2), [.message(OSCMessage("/b", [.int64(3)]))])
        let expected = try OSCBundle(timeTag: .immediately, [.message(OSCMessage("/a")), .bundle(inner)]).serialize()
        let written = write(capacity: 128) { writer in
            writer.beginBundle(timeTag: .immediately)
            let first = writer.beginElement()
            writer.beginMessage(address: "/a", argumentCount: 0)
            writer.endMessage()
            writer.endElement(first)
            let second = writer.beginElement()
            writer.beginBundle(timeTag: OSCTimeTag(seconds: 1, fraction: 2))
            let nested = writer.beginElement()
            writer.beginMessage(address: "/b", typeTags: ",h")
            writer.append(int64: 3)
            writer.endMessage()
            writer.endElement(nested)
            writer.endElement(second)
        }
        #expect(try written.result.get() == expected)
    }

    @Test func resetLetsOneWriterProduceManyPackets() throws {
        var storage = [UInt8](repeating: 0xFF, count: 32)
        try storage.withUnsafeMutableBytes { buffer in
            var writer = OSCWriter(buffer)
            for note in Int32(0)..<3 {
                writer.reset()
                writer.beginMessage(address: "/n", argumentCount: 1)
                writer.append(int32: note)
                writer.endMessage()
                let size = try writer.finish()
                let expected = try OSCMessage("/n", [.int32(note)]).serialize()
                #expect(Array(buffer[0..<size]) == expected)
            }
        }
    }

    /// A misuse of the writer and the error it must report.
    struct Misuse: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let error: OSCWriteError
        let write: @Sendable (inout OSCWriter) -> Void
    }

    static let misuses: [Misuse] = [
        Misuse(testDescription: "address without slash", error: .addressMustStartWithSlash) {
            $0.beginMessage(address: "a", argumentCount: 0)
        },
        Misuse(testDescription: "empty address", error: .addressMustStartWithSlash) {
            $0.beginMessage(address: "", argumentCount: 0)
        },
        Misuse(testDescription: "NUL in address", error: .stringContainsNUL) {
            $0.beginMessage(address: "/a\u{0}b", argumentCount: 0)
        },
        Misuse(testDescription: "NUL in string argument", error: .stringContainsNUL) {
            $0.beginMessage(address: "/a", argumentCount: 1)
            $0.append(string: "x\u{0}")
        },
        Misuse(testDescription: "unknown declared tag", error: .unknownTypeTag(UInt8(ascii: "q"))) {
            $0.beginMessage(address: "/a", typeTags: "iq")
        },
        Misuse(testDescription: "array tags", error: .unknownTypeTag(UInt8(ascii: "["))) {
            $0.beginMessage(address: "/a", typeTags: "[i]")
        },
        Misuse(testDescription: "argument of the wrong type", error: .argumentDoesNotMatchTypeTag) {
            $0.beginMessage(address: "/a", typeTags: "f")
            $0.append(int32: 1)
        },
        Misuse(testDescription: "one argument too many", error: .tooManyArguments) {
            $0.beginMessage(address: "/a", argumentCount: 1)
            $0.append(int32: 1)
            $0.appendNil()
        },
        Misuse(testDescription: "argument missing", error: .missingArguments) {
            $0.beginMessage(address: "/a", typeTags: "ii")
            $0.append(int32: 1)
            $0.endMessage()
        },
        Misuse(testDescription: "negative argument count", error: .invalidArgumentCount) {
            $0.beginMessage(address: "/a", argumentCount: -1)
        },
        Misuse(testDescription: "append without a message", error: .noMessageOpen) {
            $0.append(int32: 1)
        },
        Misuse(testDescription: "message left open", error: .messageNotEnded) {
            $0.beginMessage(address: "/a", argumentCount: 0)
        },
        Misuse(testDescription: "two messages at once", error: .messageNotEnded) {
            $0.beginMessage(address: "/a", argumentCount: 0)
            $0.beginMessage(address: "/b", argumentCount: 0)
        },
        Misuse(testDescription: "element left open", error: .unbalancedBundle) {
            $0.beginBundle(timeTag: .immediately)
            _ = $0.beginElement()
        },
        Misuse(testDescription: "empty element", error: .emptyBundleElement) {
            $0.beginBundle(timeTag: .immediately)
            $0.endElement($0.beginElement())
        },
        Misuse(testDescription: "first failure is the one reported", error: .noMessageOpen) {
            $0.endMessage()
            $0.beginMessage(address: "a", argumentCount: 0)
        },
    ]

    @Test(arguments: misuses)
    func misuseIsReportedByFinish(misuse: Misuse) {
        let (result, overran) = write(capacity: 64, misuse.write)
        #expect(throws: misuse.error) { try result.get() }
        #expect(!overran)
    }
}
