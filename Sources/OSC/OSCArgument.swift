/// One OSC argument as an owned value, for code off the hot path (tests, the command line).
///
/// Equality compares floating-point values by bit pattern, because two packets with the same
/// bytes should compare equal even when they carry NaN.
package enum OSCArgument: Sendable, Hashable, CustomStringConvertible {
    case int32(Int32)
    case float32(Float)
    case string(String)
    case blob([UInt8])
    case int64(Int64)
    case double(Double)
    case timeTag(OSCTimeTag)
    case `true`
    case `false`
    case `nil`
    /// `I`: impulse (OSC 1.1), called infinitum in OSC 1.0.
    case impulse
    /// `m`: port id, status byte, data 1, data 2.
    case midi(port: UInt8, status: UInt8, data1: UInt8, data2: UInt8)

    /// The type tag this argument is written with.
    package var typeTag: UInt8 {
        switch self {
        case .int32: OSCTypeTag.int32
        case .float32: OSCTypeTag.float32
        case .string: OSCTypeTag.string
        case .blob: OSCTypeTag.blob
        case .int64: OSCTypeTag.int64
        case .double: OSCTypeTag.double
        case .timeTag: OSCTypeTag.timeTag
        case .true: OSCTypeTag.true
        case .false: OSCTypeTag.false
        case .nil: OSCTypeTag.nil
        case .impulse: OSCTypeTag.impulse
        case .midi: OSCTypeTag.midi
        }
    }

    /// Bytes this argument's data takes on the wire (its type tag not counted).
    var encodedSize: Int {
        switch self {
        case .int32, .float32, .midi: 4
        case .int64, .double, .timeTag: 8
        case .true, .false, .nil, .impulse: 0
        case .string(let value): OSCWriter.padded(value.utf8.count + 1)
        case .blob(let bytes): 4 + OSCWriter.padded(bytes.count)
        }
    }

    /// Copies an argument out of a packet being read.
    package init(_ view: OSCArgumentView) {
        switch view {
        case .int32(let value): self = .int32(value)
        case .float32(let value): self = .float32(value)
        case .string(let bytes): self = .string(String(decoding: bytes, as: UTF8.self))
        case .blob(let bytes): self = .blob(Array(bytes))
        case .int64(let value): self = .int64(value)
        case .double(let value): self = .double(value)
        case .timeTag(let value): self = .timeTag(value)
        case .true: self = .true
        case .false: self = .false
        case .nil: self = .nil
        case .impulse: self = .impulse
        case .midi(let port, let status, let data1, let data2):
            self = .midi(port: port, status: status, data1: data1, data2: data2)
        }
    }

    /// Appends this argument to the message open in `writer`.
    func write(to writer: inout OSCWriter) {
        switch self {
        case .int32(let value): writer.append(int32: value)
        case .float32(let value): writer.append(float32: value)
        case .string(let value): writer.append(string: value)
        case .blob(let bytes): bytes.withUnsafeBytes { writer.append(blob: $0) }
        case .int64(let value): writer.append(int64: value)
        case .double(let value): writer.append(double: value)
        case .timeTag(let value): writer.append(timeTag: value)
        case .true: writer.append(bool: true)
        case .false: writer.append(bool: false)
        case .nil: writer.appendNil()
        case .impulse: writer.appendImpulse()
        case .midi(let port, let status, let data1, let data2):
            writer.append(midiPort: port, status: status, data1: data1, data2: data2)
        }
    }

    package static func == (lhs: OSCArgument, rhs: OSCArgument) -> Bool {
        switch (lhs, rhs) {
        case (.int32(let a), .int32(let b)): a == b
        case (.float32(let a), .float32(let b)): a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): a == b
        case (.blob(let a), .blob(let b)): a == b
        case (.int64(let a), .int64(let b)): a == b
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.timeTag(let a), .timeTag(let b)): a == b
        case (.true, .true), (.false, .false), (.nil, .nil), (.impulse, .impulse): true
        case (.midi(let a0, let a1, let a2, let a3), .midi(let b0, let b1, let b2, let b3)):
            a0 == b0 && a1 == b1 && a2 == b2 && a3 == b3
        default: false
        }
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(typeTag)
        switch self {
        case .int32(let value): hasher.combine(value)
        case .float32(let value): hasher.combine(value.bitPattern)
        case .string(let value): hasher.combine(value)
        case .blob(let bytes): hasher.combine(bytes)
        case .int64(let value): hasher.combine(value)
        case .double(let value): hasher.combine(value.bitPattern)
        case .timeTag(let value): hasher.combine(value)
        case .true, .false, .nil, .impulse: break
        case .midi(let port, let status, let data1, let data2):
            hasher.combine(port)
            hasher.combine(status)
            hasher.combine(data1)
            hasher.combine(data2)
        }
    }

    /// The argument as its type tag and value, e.g. `i:60` or `s:"hello"`.
    package var description: String {
        switch self {
        case .int32(let value): "i:\(value)"
        case .float32(let value): "f:\(value)"
        case .string(let value): "s:\"\(value)\""
        case .blob(let bytes): "b:\(bytes.count) bytes"
        case .int64(let value): "h:\(value)"
        case .double(let value): "d:\(value)"
        case .timeTag(let value): "t:\(value)"
        case .true: "T"
        case .false: "F"
        case .nil: "N"
        case .impulse: "I"
        case .midi(let port, let status, let data1, let data2): "m:\(port),\(status),\(data1),\(data2)"
        }
    }
}
