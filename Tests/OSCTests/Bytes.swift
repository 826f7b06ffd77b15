/// Small builders for hand-written packets in tests.
enum Bytes {
    /// UTF-8 without terminator or padding.
    static func raw(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// An OSC string: UTF-8, NUL, zero padding to 4 bytes.
    static func string(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8) + [0]
        while bytes.count % 4 != 0 { bytes.append(0) }
        return bytes
    }

    static func int32(_ value: Int32) -> [UInt8] {
        let bits = UInt32(bitPattern: value)
        return [UInt8(bits >> 24), UInt8(bits >> 16 & 0xFF), UInt8(bits >> 8 & 0xFF), UInt8(bits & 0xFF)]
    }

    /// `#bundle`, NUL, and an `immediately` time tag.
    static let bundleHeader: [UInt8] = string("#bundle") + [0, 0, 0, 0, 0, 0, 0, 1]

    /// A bundle holding the given elements, each with its size prefix.
    static func bundle(_ elements: [UInt8]...) -> [UInt8] {
        var bytes = bundleHeader
        for element in elements { bytes += int32(Int32(element.count)) + element }
        return bytes
    }

    /// `depth` bundles, each holding the next, the innermost holding `/a ,`.
    static func nestedBundles(depth: Int) -> [UInt8] {
        var bytes = string("/a") + string(",")
        for _ in 0..<depth { bytes = bundle(bytes) }
        return bytes
    }
}
