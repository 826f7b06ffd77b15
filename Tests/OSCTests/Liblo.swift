import CLiblo
import OSC

/// Builds and serialises packets with liblo, the reference the encoder is checked against.
enum Liblo {
    /// Whether liblo's API can build `packet`: `lo_blob_new` refuses size 0, so a message
    /// with an empty blob can only be checked by liblo's decoder.
    static func canBuild(_ packet: OSCPacket) -> Bool {
        switch packet {
        case .message(let message):
            !message.arguments.contains { if case .blob(let bytes) = $0 { bytes.isEmpty } else { false } }
        case .bundle(let bundle):
            bundle.elements.allSatisfy(canBuild)
        }
    }

    /// The bytes `lo_message_serialise` / `lo_bundle_serialise` produce for `packet`.
    static func serialise(_ packet: OSCPacket) -> [UInt8] {
        switch packet {
        case .message(let message):
            let handle = makeMessage(message.arguments)
            defer { lo_message_free(handle) }
            var size = lo_message_length(handle, message.address)
            var bytes = [UInt8](repeating: 0xEE, count: size)
            _ = lo_message_serialise(handle, message.address, &bytes, &size)
            return Array(bytes.prefix(size))
        case .bundle(let bundle):
            let handle = makeBundle(bundle)
            defer { lo_bundle_free_recursive(handle) }
            var size = lo_bundle_length(handle)
            var bytes = [UInt8](repeating: 0xEE, count: size)
            _ = lo_bundle_serialise(handle, &bytes, &size)
            return Array(bytes.prefix(size))
        }
    }

    /// Whether liblo's own decoder accepts `bytes` as a message with `typeTags`.
    static func deserialisesMessage(_ bytes: [UInt8], typeTags expected: String) -> Bool {
        var bytes = bytes
        var result: Int32 = 0
        guard let handle = lo_message_deserialise(&bytes, bytes.count, &result) else { return false }
        defer { lo_message_free(handle) }
        let tags = lo_message_get_types(handle).map { String(cString: $0) } ?? ""
        return result == 0 && tags == expected
    }

    private static func makeMessage(_ arguments: [OSCArgument]) -> lo_message {
        let handle = lo_message_new()!
        for argument in arguments {
            switch argument {
            case .int32(let value): _ = lo_message_add_int32(handle, value)
            case .float32(let value): _ = lo_message_add_float(handle, value)
            case .string(let value): _ = lo_message_add_string(handle, value)
            case .blob(let bytes):
                let blob = lo_blob_new(Int32(bytes.count), bytes)
                _ = lo_message_add_blob(handle, blob)
                lo_blob_free(blob)
            case .int64(let value): _ = lo_message_add_int64(handle, value)
            case .double(let value): _ = lo_message_add_double(handle, value)
            case .timeTag(let value):
                _ = lo_message_add_timetag(handle, lo_timetag(sec: value.seconds, frac: value.fraction))
            case .true: _ = lo_message_add_true(handle)
            case .false: _ = lo_message_add_false(handle)
            case .nil: _ = lo_message_add_nil(handle)
            case .impulse: _ = lo_message_add_infinitum(handle)
            case .midi(let port, let status, let data1, let data2):
                var midi = [port, status, data1, data2]
                _ = lo_message_add_midi(handle, &midi)
            }
        }
        return handle
    }

    private static func makeBundle(_ bundle: OSCBundle) -> lo_bundle {
        let handle = lo_bundle_new(lo_timetag(sec: bundle.timeTag.seconds, frac: bundle.timeTag.fraction))!
        for element in bundle.elements {
            switch element {
            case .message(let message):
                // The bundle takes a reference; lo_bundle_free_recursive drops it.
                _ = lo_bundle_add_message(handle, message.address, makeMessage(message.arguments))
            case .bundle(let nested):
                _ = lo_bundle_add_bundle(handle, makeBundle(nested))
            }
        }
        return handle
    }
}
