import OSC
import TestSupport
import Testing

/// Random valid packets, to be mutated.
struct PacketGenerator {
    var random: SplitMix64

    mutating func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
    mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }

    mutating func text(maxLength: Int) -> String {
        let alphabet: [Character] = ["a", "b", "z", "_", "0", "9", " ", "é", "♪", "/", "*", "{", ","]
        var result = ""
        for _ in 0..<below(maxLength + 1) { result.append(alphabet[below(alphabet.count)]) }
        return result
    }

    mutating func argument() -> OSCArgument {
        switch below(12) {
        case 0: .int32(Int32(truncatingIfNeeded: random.next()))
        case 1: .float32(Float(bitPattern: UInt32(truncatingIfNeeded: random.next())))
        case 2: .string(text(maxLength: 9))
        case 3: .blob((0..<below(10)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        case 4: .int64(Int64(bitPattern: random.next()))
        case 5: .double(Double(bitPattern: random.next()))
        case 6: .timeTag(OSCTimeTag(rawValue: random.next()))
        case 7: .true
        case 8: .false
        case 9: .nil
        case 10: .impulse
        default:
            .midi(
                port: UInt8(truncatingIfNeeded: random.next()), status: UInt8(truncatingIfNeeded: random.next()),
                data1: UInt8(truncatingIfNeeded: random.next()), data2: UInt8(truncatingIfNeeded: random.next()))
        }
    }

    mutating func packet(depth: Int = 0) -> OSCPacket {
        if depth < 3, chance(25) {
            var elements: [OSCPacket] = []
            for _ in 0..<below(4) { elements.append(packet(depth: depth + 1)) }
            return .bundle(OSCBundle(timeTag: OSCTimeTag(rawValue: random.next()), elements))
        }
        var arguments: [OSCArgument] = []
        for _ in 0..<below(6) { arguments.append(argument()) }
        return .message(OSCMessage("/" + text(maxLength: 8), arguments))
    }

    /// Damages `bytes` the ways hostile or broken senders do.
    mutating func mutate(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        switch below(7) {
        case 0:  // bit flips
            for _ in 0...below(3) where !bytes.isEmpty {
                bytes[below(bytes.count)] ^= 1 << UInt8(below(8))
            }
        case 1:  // truncation, often keeping the size a multiple of 4
            let cut = below(bytes.count + 1)
            bytes.removeLast(chance(70) ? cut & ~3 : cut)
        case 2:  // a size or length field rewritten with a hostile value
            let words = bytes.count / 4
            if words > 0 {
                let at = below(words) * 4
                let values: [Int32] = [
                    0, -1, -4, 1, 3, 4, 8, 0x7FFF_FFFF, Int32.min, Int32(bytes.count), Int32(bytes.count - at),
                ]
                let value = Bytes.int32(values[below(values.count)])
                bytes.replaceSubrange(at..<at + 4, with: value)
            }
        case 3:  // a random type tag
            if let comma = bytes.firstIndex(of: UInt8(ascii: ",")), comma + 1 < bytes.count {
                let tags = Array("ifsbhdtTFNImSc[]x\0,".utf8)
                bytes[comma + 1 + below(min(4, bytes.count - comma - 1))] = tags[below(tags.count)]
            }
        case 4:  // words inserted or removed
            let at = below(bytes.count / 4 + 1) * 4
            if chance(50), at + 4 <= bytes.count {
                bytes.removeSubrange(at..<at + 4)
            } else {
                bytes.insert(contentsOf: Bytes.int32(Int32(truncatingIfNeeded: random.next())), at: at)
            }
        case 5:  // pure noise, sometimes dressed as a message or bundle
            bytes = (0..<below(64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if chance(50), bytes.count >= 16 {
                bytes.replaceSubrange(
                    0..<16,
                    with: chance(50) ? Bytes.bundleHeader : Bytes.string("/a") + Bytes.string(",ibs") + [0, 0, 0, 0])
            }
        default:  // left intact
            break
        }
        return bytes
    }
}

@Suite("Decoder robustness")
struct DecoderRobustnessTests {
    @Test func randomAndMutatedPacketsNeverCrashAndDecodedOnesRoundTrip() throws {
        var generator = PacketGenerator(random: SplitMix64(seed: 0x05C0_05C0))
        var decodedCount = 0
        var rejectedCount = 0
        let iterations = 100_000
        for _ in 0..<iterations {
            let original = generator.packet()
            let encoded = try original.serialize()
            #expect(try OSCPacket.decode(encoded) == original)
            let mutated = generator.mutate(encoded)
            do {
                let decoded = try OSCPacket.decode(mutated)
                decodedCount += 1
                let reencoded = try decoded.serialize()
                #expect(try OSCPacket.decode(reencoded) == decoded, "\(mutated)")
            } catch is OSCDecodeError {
                rejectedCount += 1
            }
        }
        #expect(decodedCount + rejectedCount == iterations)
        // Both outcomes must be exercised, or the mutations are too weak or too strong.
        #expect(decodedCount > iterations / 10)
        #expect(rejectedCount > iterations / 3)
    }

    @Test func everyTruncatedMessageIsRejected() throws {
        var generator = PacketGenerator(random: SplitMix64(seed: 7))
        var checked = 0
        while checked < 300 {
            // A bundle cut at an element boundary is still a bundle, so only messages qualify.
            let packet = generator.packet()
            guard case .message = packet else { continue }
            let encoded = try packet.serialize()
            for length in 0..<encoded.count {
                #expect(throws: OSCDecodeError.self) { try OSCPacket.decode(Array(encoded.prefix(length))) }
            }
            checked += 1
        }
    }
}
