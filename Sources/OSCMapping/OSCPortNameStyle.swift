/// How an input port's name becomes one segment of an OSC address.
package enum OSCPortNameStyle: String, Sendable, Hashable, CaseIterable {
    /// Leading and trailing white space dropped; space, `#*,/?[]{}` and control characters
    /// become `_`; an empty name becomes `_`. Case and every other character are kept.
    case osc
    /// What osmid's `m2o` 0.8.0 does: as ``osc``, then ASCII letters lowercased (`:` is kept).
    case osmid

    /// The name as it appears in an address.
    package func sanitise(_ name: String) -> String {
        String(decoding: sanitisedBytes(name), as: UTF8.self)
    }

    /// The name's UTF-8 bytes as they appear in an address; computed once per port, at build time.
    package func sanitisedBytes(_ name: String) -> [UInt8] {
        var bytes = Array(name.utf8)
        while let last = bytes.last, Self.isWhiteSpace(last) { bytes.removeLast() }
        let start = bytes.firstIndex { !Self.isWhiteSpace($0) } ?? bytes.endIndex
        bytes.removeSubrange(..<start)
        if bytes.isEmpty { return [UInt8(ascii: "_")] }
        for i in bytes.indices {
            if Self.isReplaced(bytes[i]) {
                bytes[i] = UInt8(ascii: "_")
            } else if self == .osmid, bytes[i] >= UInt8(ascii: "A"), bytes[i] <= UInt8(ascii: "Z") {
                bytes[i] += 0x20
            }
        }
        return bytes
    }

    private static func isWhiteSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    private static func isReplaced(_ byte: UInt8) -> Bool {
        switch byte {
        case 0..<0x21, 0x7F: true
        case UInt8(ascii: "#"), UInt8(ascii: "*"), UInt8(ascii: ","), UInt8(ascii: "/"), UInt8(ascii: "?"),
            UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "{"), UInt8(ascii: "}"):
            true
        default: false
        }
    }
}
