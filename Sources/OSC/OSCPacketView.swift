/// A validated OSC packet read in place: a message or a bundle whose parts point into the
/// caller's buffer, which must outlive the view.
///
/// Creating the view checks the whole packet — every length, alignment, padding byte and type
/// tag, through every nested bundle — so reading it afterwards cannot fail.
package enum OSCPacketView {
    case message(OSCMessageView)
    case bundle(OSCBundleView)

    /// How deeply bundles may nest; the outermost bundle is depth 1. Hostile packets nest far
    /// deeper, and a bound keeps both the recursion and the work finite.
    package static let maximumBundleDepth = 16

    /// Validates `bytes` as one OSC packet.
    package init(_ bytes: UnsafeRawBufferPointer) throws(OSCDecodeError) {
        try self.init(bytes, depth: 0)
    }

    /// `depth` counts the bundles this packet sits inside.
    package init(_ bytes: UnsafeRawBufferPointer, depth: Int) throws(OSCDecodeError) {
        guard !bytes.isEmpty else { throw .empty }
        guard bytes.count % 4 == 0 else { throw .sizeNotMultipleOfFour }
        if OSCBundleView.hasBundleHeader(bytes) {
            guard depth < Self.maximumBundleDepth else { throw .nestingTooDeep }
            self = .bundle(try OSCBundleView(bytes, depth: depth + 1))
        } else {
            self = .message(try OSCMessageView(bytes))
        }
    }
}

/// A validated bundle read in place.
package struct OSCBundleView {
    /// The bundle's bytes, header included.
    let bytes: UnsafeRawBufferPointer
    /// When the bundle's messages should take effect.
    package let timeTag: OSCTimeTag
    // This bundle's own nesting depth, so its elements are checked against the same limit.
    let depth: Int

    static let headerSize = 16

    static func hasBundleHeader(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let tag: StaticString = "#bundle"
        guard bytes.count >= 8, bytes[7] == 0 else { return false }
        return tag.withUTF8Buffer { tag in
            var i = 0
            while i < 7 {
                if bytes[i] != tag[i] { return false }
                i += 1
            }
            return true
        }
    }

    package init(_ bytes: UnsafeRawBufferPointer, depth: Int) throws(OSCDecodeError) {
        var reader = OSCByteReader(bytes, offset: 8)
        timeTag = OSCTimeTag(rawValue: try reader.readUInt64(orThrow: .truncatedBundleHeader))
        self.bytes = bytes
        self.depth = depth
        while reader.remaining > 0 {
            _ = try OSCPacketView(Self.readElement(&reader), depth: depth)
        }
    }

    /// Reads one size-prefixed element.
    static func readElement(_ reader: inout OSCByteReader) throws(OSCDecodeError) -> UnsafeRawBufferPointer {
        let size = Int(Int32(bitPattern: try reader.readUInt32(orThrow: .bundleElementSizeOutOfRange)))
        guard size > 0 else { throw .bundleElementSizeOutOfRange }
        return try reader.readBytes(size, orThrow: .bundleElementSizeOutOfRange)
    }

    /// The bundle's elements, in order.
    package var elements: Elements { Elements(reader: OSCByteReader(bytes, offset: Self.headerSize), depth: depth) }

    /// Iterates a bundle's elements without allocating.
    package struct Elements: Sequence, IteratorProtocol {
        var reader: OSCByteReader
        let depth: Int

        package mutating func next() -> OSCPacketView? {
            guard reader.remaining > 0 else { return nil }
            // The bundle was validated when the view was made, so these cannot fail; ending
            // the iteration is the safe answer if they somehow did.
            guard let element = try? OSCBundleView.readElement(&reader),
                let packet = try? OSCPacketView(element, depth: depth)
            else {
                reader.offset = reader.bytes.count
                return nil
            }
            return packet
        }
    }
}
