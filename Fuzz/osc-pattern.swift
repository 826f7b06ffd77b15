// libFuzzer target: OSC address pattern matching on hostile patterns and addresses.
//
// The input is split at its first NUL (or in half) into a pattern and an address. Matching
// must not trap, must agree between the String and the byte API, and a plain address (no
// pattern characters) must match itself.
@testable import OSC

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let split = bytes.firstIndex(of: 0) ?? size / 2
    let pattern = UnsafeRawBufferPointer(rebasing: bytes[0..<split])
    let address = UnsafeRawBufferPointer(rebasing: bytes[min(split + 1, size)..<size])

    let matched = OSCAddressPattern.matches(pattern: pattern, address: address)
    _ = OSCAddressPattern.matches(pattern: address, address: pattern)
    _ = OSCAddressPattern.isPattern(pattern)

    // The String API reads the same UTF-8, so it must agree whenever the bytes are valid UTF-8.
    if let patternText = String(validatingUTF8Bytes: pattern), let addressText = String(validatingUTF8Bytes: address) {
        if OSCAddressPattern.matches(pattern: patternText, address: addressText) != matched {
            fatalError("the String and byte matchers disagree on '\(patternText)' and '\(addressText)'")
        }
    }
    if !OSCAddressPattern.isPattern(address), !address.contains(where: isSpecial) {
        if !OSCAddressPattern.matches(pattern: address, address: address) {
            fatalError("a plain address does not match itself: \(Array(address))")
        }
    }
    return 0
}

/// Bytes that mean something in a pattern even though `isPattern` does not start one with them.
func isSpecial(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: ",") || byte == UInt8(ascii: "!")
        || byte == UInt8(ascii: "-")
}

extension String {
    init?(validatingUTF8Bytes bytes: UnsafeRawBufferPointer) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        self = text
    }
}
