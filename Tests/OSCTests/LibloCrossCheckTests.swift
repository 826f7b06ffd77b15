import OSC
import Testing

@Suite("Cross-check with liblo")
struct LibloCrossCheckTests {
    @Test func thereAreAtLeastThirtyShapes() {
        #expect(shapes.count >= 30, "only \(shapes.count) shapes")
    }

    @Test(arguments: shapes)
    func encoderWritesTheSameBytesAsLiblo(shape: Shape) throws {
        guard Liblo.canBuild(shape.packet) else { return }
        let ours = try shape.packet.serialize()
        let theirs = Liblo.serialise(shape.packet)
        #expect(ours == theirs)
        #expect(ours.count == shape.packet.encodedSize)
    }

    @Test(arguments: shapes)
    func packetsSerialisedByLibloDecodeToTheSameValue(shape: Shape) throws {
        guard Liblo.canBuild(shape.packet) else { return }
        let decoded = try OSCPacket.decode(Liblo.serialise(shape.packet))
        #expect(decoded == shape.packet)
    }

    @Test func everyShapeButTheEmptyBlobIsBuiltByLiblo() {
        #expect(shapes.filter { !Liblo.canBuild($0.packet) }.map(\.name) == ["blob of 0 bytes"])
    }

    @Test(arguments: shapes)
    func libloDecodesOurMessagesWithTheSameTypeTags(shape: Shape) throws {
        guard case .message(let message) = shape.packet else { return }
        let tags = String(decoding: message.arguments.map(\.typeTag), as: UTF8.self)
        #expect(Liblo.deserialisesMessage(try shape.packet.serialize(), typeTags: tags))
    }
}
