/// What is wrong with a packet that ``OSCPacketView`` refused to read.
package enum OSCDecodeError: Error, Equatable, Sendable {
    /// A zero-length packet (or bundle element).
    case empty
    /// OSC packets (and bundle elements) are a whole number of 4-byte words.
    case sizeNotMultipleOfFour
    /// A message whose address does not start with `/` (and a packet that is not `#bundle`).
    case addressMustStartWithSlash
    /// A string runs to the end of the packet without a NUL.
    case unterminatedString
    /// Padding after a string or blob is not all zero bytes.
    case nonZeroPadding
    /// The message ends right after its address, with no type tag string.
    case missingTypeTags
    /// The type tag string does not start with `,`.
    case missingComma
    /// A type tag this decoder cannot read; OSC 1.0 gives no way to skip an unknown one.
    case unknownTypeTag(UInt8)
    /// OSC 1.1 array tags `[` `]`, which this decoder does not support.
    case arrayTagsNotSupported
    /// The type tags ask for more argument data than the message holds.
    case truncatedArgument
    /// A blob's size is negative or larger than what is left of the message.
    case blobLengthOutOfRange
    /// Bytes left over after the last argument the type tags describe.
    case trailingBytes
    /// A `#bundle` packet shorter than its 16-byte header.
    case truncatedBundleHeader
    /// A bundle element's size is zero, negative, or past the end of the bundle.
    case bundleElementSizeOutOfRange
    /// Bundles nested deeper than ``OSCPacketView/maximumBundleDepth``.
    case nestingTooDeep
}
