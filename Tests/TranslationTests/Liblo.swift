import CLiblo

/// One OSC argument as the tests state expectations.
enum Argument: Hashable, Sendable, CustomStringConvertible {
    case i(Int32)
    case f(Float)
    case b([UInt8])
    case m(UInt8, UInt8, UInt8, UInt8)
    case h(Int64)
    case d(Double)
    /// `T`, `F`, `N` or `I`: a tag without data.
    case tag(Character)

    var description: String {
        switch self {
        case .i(let value): "i \(value)"
        case .f(let value): "f \(value)"
        case .b(let bytes): "b \(bytes)"
        case .m(let a, let b, let c, let d): "m \([a, b, c, d])"
        case .h(let value): "h \(value)"
        case .d(let value): "d \(value)"
        case .tag(let tag): String(tag)
        }
    }
}

/// The reference: the bytes `lo_message_serialise` produces for an address and arguments.
func libloBytes(_ address: String, _ arguments: [Argument]) -> [UInt8] {
    let message = lo_message_new()!
    defer { lo_message_free(message) }
    for argument in arguments {
        switch argument {
        case .i(let value): _ = lo_message_add_int32(message, value)
        case .f(let value): _ = lo_message_add_float(message, value)
        case .b(let bytes):
            let blob = lo_blob_new(Int32(bytes.count), bytes)
            _ = lo_message_add_blob(message, blob)
            lo_blob_free(blob)
        case .m(let port, let status, let data1, let data2):
            var midi = [port, status, data1, data2]
            _ = lo_message_add_midi(message, &midi)
        case .h(let value): _ = lo_message_add_int64(message, value)
        case .d(let value): _ = lo_message_add_double(message, value)
        case .tag("T"): _ = lo_message_add_true(message)
        case .tag("F"): _ = lo_message_add_false(message)
        case .tag("N"): _ = lo_message_add_nil(message)
        case .tag(_): _ = lo_message_add_infinitum(message)
        }
    }
    var size = lo_message_length(message, address)
    var bytes = [UInt8](repeating: 0xEE, count: size)
    _ = lo_message_serialise(message, address, &bytes, &size)
    return Array(bytes.prefix(size))
}

/// Parses hex such as `2f6d69` into bytes.
func hexBytes(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}
