import OSC
import Recovery

/// Why a datagram was not valid OSC, as counted and shown by `aseqosc status`: one reason per
/// ``OSCDecodeError`` case, so a counter is an index rather than a string built per packet.
package enum MalformedOSC {
    /// The counter index for `error` (below 16).
    static func index(of error: OSCDecodeError) -> Int {
        switch error {
        case .empty: 0
        case .sizeNotMultipleOfFour: 1
        case .addressMustStartWithSlash: 2
        case .unterminatedString: 3
        case .nonZeroPadding: 4
        case .missingTypeTags: 5
        case .missingComma: 6
        case .unknownTypeTag: 7
        case .arrayTagsNotSupported: 8
        case .truncatedArgument: 9
        case .blobLengthOutOfRange: 10
        case .trailingBytes: 11
        case .truncatedBundleHeader: 12
        case .bundleElementSizeOutOfRange: 13
        case .nestingTooDeep: 14
        }
    }

    /// The reason's name in `status` (the `OSCDecodeError` case), by index.
    package static let names = [
        "empty", "sizeNotMultipleOfFour", "addressMustStartWithSlash", "unterminatedString", "nonZeroPadding",
        "missingTypeTags", "missingComma", "unknownTypeTag", "arrayTagsNotSupported", "truncatedArgument",
        "blobLengthOutOfRange", "trailingBytes", "truncatedBundleHeader", "bundleElementSizeOutOfRange",
        "nestingTooDeep",
    ]
}
