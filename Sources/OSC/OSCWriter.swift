/// Why an ``OSCWriter`` could not produce a packet.
package enum OSCWriteError: Error, Equatable, Sendable {
    /// The packet does not fit; nothing was written past the end of the buffer.
    case bufferTooSmall
    /// OSC addresses start with `/`.
    case addressMustStartWithSlash
    /// An OSC string ends at its first NUL, so an embedded one would cut it short on the wire.
    case stringContainsNUL
    /// A type tag outside ``OSCTypeTag`` (OSC 1.1 arrays `[` `]` included).
    case unknownTypeTag(UInt8)
    /// An appended argument is not the type that `beginMessage(address:typeTags:)` declared.
    case argumentDoesNotMatchTypeTag
    /// More arguments were appended than the message declared.
    case tooManyArguments
    /// `endMessage()` came before every declared argument was appended.
    case missingArguments
    /// A negative argument count.
    case invalidArgumentCount
    /// A blob or bundle element longer than its Int32 size field can say.
    case sizeExceedsInt32
    /// `append` or `endMessage()` without `beginMessage`.
    case noMessageOpen
    /// A message was begun, a bundle element ended, or the packet finished while a message was
    /// still open.
    case messageNotEnded
    /// An element was ended that is not open, or the packet finished with elements still open.
    case unbalancedBundle
    /// A bundle element with nothing in it, which no decoder can read as a message or bundle.
    case emptyBundleElement
}

/// Writes OSC 1.0 packets into a caller-owned buffer without allocating.
///
/// Each message declares its arguments up front — either their count (each `append` then writes
/// its own type tag) or their type tags (each `append` is checked against them) — so the type tag
/// string can be laid out before the argument data that follows it.
///
/// Errors are sticky, as in a stream: the first failure is kept in ``failure``, every later call
/// does nothing, and ``finish()`` reports it. A failing call writes nothing, so the writer never
/// touches a byte past the end of its buffer.
///
/// ```swift
/// var writer = OSCWriter(buffer)
/// writer.beginMessage(address: "/note_on", argumentCount: 3)
/// writer.append(int32: 0); writer.append(int32: 60); writer.append(int32: 100)
/// writer.endMessage()
/// let size = try writer.finish()
/// ```
package struct OSCWriter {
    /// Where the packet goes.
    package let buffer: UnsafeMutableRawBufferPointer
    /// Bytes written so far.
    package private(set) var count = 0
    /// The first thing that went wrong, if anything did.
    package private(set) var failure: OSCWriteError?

    // Within an open message: the next type tag slot and the end of the slots.
    private var tagCursor = 0
    private var tagEnd = 0
    private var messageOpen = false
    // Whether the slots hold declared tags to check, rather than zeros to fill in.
    private var tagsDeclared = false
    private var openElements = 0

    /// A writer that starts at the beginning of `buffer`.
    package init(_ buffer: UnsafeMutableRawBufferPointer) {
        self.buffer = buffer
    }

    /// Starts over at the beginning of the buffer, forgetting any failure, so one writer can be
    /// reused for every packet.
    package mutating func reset() {
        count = 0
        failure = nil
        messageOpen = false
        tagsDeclared = false
        openElements = 0
    }

    /// The packet size, or the first failure.
    package func finish() throws(OSCWriteError) -> Int {
        if let failure { throw failure }
        if messageOpen { throw .messageNotEnded }
        if openElements != 0 { throw .unbalancedBundle }
        return count
    }

    // MARK: Messages

    /// Begins a message with `argumentCount` arguments whose type tags the `append` calls write.
    package mutating func beginMessage(address: UnsafeRawBufferPointer, argumentCount: Int) {
        guard argumentCount >= 0 else { return fail(.invalidArgumentCount) }
        // Checked before the tag area's size is computed so that the sum cannot overflow.
        guard argumentCount <= buffer.count else { return fail(.bufferTooSmall) }
        guard beginAddress(address, tagAreaSize: Self.padded(argumentCount + 2)) else { return }
        buffer[count] = UInt8(ascii: ",")
        zero(count + 1, Self.padded(argumentCount + 2) - 1)
        tagCursor = count + 1
        tagEnd = tagCursor + argumentCount
        count += Self.padded(argumentCount + 2)
        tagsDeclared = false
        messageOpen = true
    }

    /// Begins a message whose arguments have the given type tags (a leading `,` is optional);
    /// each `append` must then match the next tag.
    package mutating func beginMessage(address: UnsafeRawBufferPointer, typeTags: UnsafeRawBufferPointer) {
        var tags = typeTags
        if let first = tags.first, first == UInt8(ascii: ",") {
            tags = UnsafeRawBufferPointer(rebasing: tags.dropFirst())
        }
        var i = 0
        while i < tags.count {
            guard OSCTypeTag.isKnown(tags[i]) else { return fail(.unknownTypeTag(tags[i])) }
            i += 1
        }
        guard tags.count <= buffer.count else { return fail(.bufferTooSmall) }
        let tagAreaSize = Self.padded(tags.count + 2)
        guard beginAddress(address, tagAreaSize: tagAreaSize) else { return }
        buffer[count] = UInt8(ascii: ",")
        copy(tags, to: count + 1)
        zero(count + 1 + tags.count, tagAreaSize - 1 - tags.count)
        tagCursor = count + 1
        tagEnd = tagCursor + tags.count
        count += tagAreaSize
        tagsDeclared = true
        messageOpen = true
    }

    /// Begins a message with `argumentCount` arguments whose type tags the `append` calls write.
    package mutating func beginMessage(address: StaticString, argumentCount: Int) {
        address.withUTF8Buffer { beginMessage(address: UnsafeRawBufferPointer($0), argumentCount: argumentCount) }
    }

    /// Begins a message with `argumentCount` arguments, reading the address's UTF-8 in place.
    package mutating func beginMessage(address: String, argumentCount: Int) {
        var address = address
        address.withUTF8 { beginMessage(address: UnsafeRawBufferPointer($0), argumentCount: argumentCount) }
    }

    /// Begins a message whose arguments have the given type tags, such as `"iif"`.
    package mutating func beginMessage(address: StaticString, typeTags: StaticString) {
        address.withUTF8Buffer { address in
            typeTags.withUTF8Buffer { tags in
                beginMessage(address: UnsafeRawBufferPointer(address), typeTags: UnsafeRawBufferPointer(tags))
            }
        }
    }

    /// Begins a message whose arguments have the given type tags, such as `"iif"`.
    package mutating func beginMessage(address: String, typeTags: String) {
        var address = address
        var typeTags = typeTags
        address.withUTF8 { address in
            typeTags.withUTF8 { tags in
                beginMessage(address: UnsafeRawBufferPointer(address), typeTags: UnsafeRawBufferPointer(tags))
            }
        }
    }

    /// Appends a whole message that `body` lays out at the start of the room left and returns
    /// the size of (a multiple of 4), or 0 when it does not fit (failing with
    /// ``OSCWriteError/bufferTooSmall``): for a formatter whose addresses were rendered and
    /// checked at load, which would only pay for the checks of ``beginMessage(address:argumentCount:)``
    /// and ``append(int32:)`` again on every message.
    package mutating func appendMessage(_ body: (UnsafeMutableRawBufferPointer) -> Int) {
        guard failure == nil else { return }
        guard !messageOpen else { return fail(.messageNotEnded) }
        let size = body(UnsafeMutableRawBufferPointer(rebasing: buffer[count...]))
        guard size > 0 else { return fail(.bufferTooSmall) }
        count += size
    }

    /// Ends the open message; fails if it is missing declared arguments.
    package mutating func endMessage() {
        guard failure == nil else { return }
        guard messageOpen else { return fail(.noMessageOpen) }
        guard tagCursor == tagEnd else { return fail(.missingArguments) }
        messageOpen = false
    }

    // MARK: Arguments

    /// Appends an `i` argument.
    package mutating func append(int32 value: Int32) {
        guard beginArgument(OSCTypeTag.int32, size: 4) else { return }
        store(UInt32(bitPattern: value))
    }

    /// Appends an `f` argument.
    package mutating func append(float32 value: Float) {
        guard beginArgument(OSCTypeTag.float32, size: 4) else { return }
        store(value.bitPattern)
    }

    /// Appends an `h` argument.
    package mutating func append(int64 value: Int64) {
        guard beginArgument(OSCTypeTag.int64, size: 8) else { return }
        store(UInt64(bitPattern: value))
    }

    /// Appends a `d` argument.
    package mutating func append(double value: Double) {
        guard beginArgument(OSCTypeTag.double, size: 8) else { return }
        store(value.bitPattern)
    }

    /// Appends a `t` argument.
    package mutating func append(timeTag value: OSCTimeTag) {
        guard beginArgument(OSCTypeTag.timeTag, size: 8) else { return }
        store(value.rawValue)
    }

    /// Appends `T` or `F`, which carry no data.
    package mutating func append(bool value: Bool) {
        _ = beginArgument(value ? OSCTypeTag.true : OSCTypeTag.false, size: 0)
    }

    /// Appends `N`, which carries no data.
    package mutating func appendNil() {
        _ = beginArgument(OSCTypeTag.nil, size: 0)
    }

    /// Appends `I` (impulse, called infinitum in OSC 1.0), which carries no data.
    package mutating func appendImpulse() {
        _ = beginArgument(OSCTypeTag.impulse, size: 0)
    }

    /// Appends an `m` argument: port id, status byte, data 1, data 2.
    package mutating func append(midiPort port: UInt8, status: UInt8, data1: UInt8, data2: UInt8) {
        guard beginArgument(OSCTypeTag.midi, size: 4) else { return }
        buffer[count] = port
        buffer[count + 1] = status
        buffer[count + 2] = data1
        buffer[count + 3] = data2
        count += 4
    }

    /// Appends an `s` argument from raw UTF-8 (without a terminating NUL).
    package mutating func append(string bytes: UnsafeRawBufferPointer) {
        guard !Self.containsNUL(bytes) else { return fail(.stringContainsNUL) }
        guard beginArgument(OSCTypeTag.string, size: Self.padded(bytes.count + 1)) else { return }
        writePaddedString(bytes)
    }

    /// Appends an `s` argument.
    package mutating func append(string: StaticString) {
        string.withUTF8Buffer { append(string: UnsafeRawBufferPointer($0)) }
    }

    /// Appends an `s` argument, reading the string's UTF-8 in place.
    package mutating func append(string: String) {
        var string = string
        string.withUTF8 { append(string: UnsafeRawBufferPointer($0)) }
    }

    /// Appends a `b` argument.
    package mutating func append(blob bytes: UnsafeRawBufferPointer) {
        guard bytes.count <= Int(Int32.max) else { return fail(.sizeExceedsInt32) }
        guard beginArgument(OSCTypeTag.blob, size: 4 + Self.padded(bytes.count)) else { return }
        store(UInt32(bytes.count))
        copy(bytes, to: count)
        zero(count + bytes.count, Self.padded(bytes.count) - bytes.count)
        count += Self.padded(bytes.count)
    }

    // MARK: Bundles

    /// A bundle element whose size slot waits to be filled in by ``endElement(_:)``.
    package struct Element: Sendable {
        fileprivate let sizeOffset: Int
    }

    /// Writes a bundle header: `#bundle`, then the time tag. Elements follow.
    package mutating func beginBundle(timeTag: OSCTimeTag) {
        guard failure == nil else { return }
        guard !messageOpen else { return fail(.messageNotEnded) }
        guard buffer.count - count >= 16 else { return fail(.bufferTooSmall) }
        Self.bundleTag.withUTF8Buffer { copy(UnsafeRawBufferPointer($0), to: count) }
        buffer[count + 7] = 0
        count += 8
        store(timeTag.rawValue)
    }

    /// Reserves the size field of a bundle element; write one message or bundle, then call
    /// ``endElement(_:)`` with the returned value.
    package mutating func beginElement() -> Element {
        guard failure == nil else { return Element(sizeOffset: -1) }
        guard !messageOpen else {
            fail(.messageNotEnded)
            return Element(sizeOffset: -1)
        }
        guard buffer.count - count >= 4 else {
            fail(.bufferTooSmall)
            return Element(sizeOffset: -1)
        }
        let element = Element(sizeOffset: count)
        store(UInt32(0))
        openElements += 1
        return element
    }

    /// Fills in the size of an element begun by ``beginElement()``.
    package mutating func endElement(_ element: Element) {
        guard failure == nil else { return }
        guard !messageOpen else { return fail(.messageNotEnded) }
        guard openElements > 0, element.sizeOffset >= 0, element.sizeOffset <= count - 4 else {
            return fail(.unbalancedBundle)
        }
        let size = count - element.sizeOffset - 4
        guard size > 0 else { return fail(.emptyBundleElement) }
        guard size <= Int(Int32.max) else { return fail(.sizeExceedsInt32) }
        buffer.storeBytes(of: UInt32(size).bigEndian, toByteOffset: element.sizeOffset, as: UInt32.self)
        openElements -= 1
    }

    // MARK: Internals

    private static let bundleTag: StaticString = "#bundle"

    /// Rounds up to the 4-byte alignment OSC requires of every field.
    @inline(__always)
    package static func padded(_ size: Int) -> Int { (size + 3) & ~3 }

    private static func containsNUL(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0 { return true }
            i += 1
        }
        return false
    }

    private mutating func fail(_ error: OSCWriteError) {
        if failure == nil { failure = error }
    }

    /// Validates and writes the address, having checked there is also room for `tagAreaSize`.
    private mutating func beginAddress(_ address: UnsafeRawBufferPointer, tagAreaSize: Int) -> Bool {
        guard failure == nil else { return false }
        guard !messageOpen else {
            fail(.messageNotEnded)
            return false
        }
        guard let first = address.first, first == UInt8(ascii: "/") else {
            fail(.addressMustStartWithSlash)
            return false
        }
        guard !Self.containsNUL(address) else {
            fail(.stringContainsNUL)
            return false
        }
        guard address.count <= buffer.count,
            Self.padded(address.count + 1) + tagAreaSize <= buffer.count - count
        else {
            fail(.bufferTooSmall)
            return false
        }
        writePaddedString(address)
        return true
    }

    /// Claims the next type tag slot and checks room for `size` bytes of data; on failure
    /// nothing is written.
    private mutating func beginArgument(_ tag: UInt8, size: Int) -> Bool {
        guard failure == nil else { return false }
        guard messageOpen else {
            fail(.noMessageOpen)
            return false
        }
        guard tagCursor < tagEnd else {
            fail(.tooManyArguments)
            return false
        }
        if tagsDeclared {
            guard buffer[tagCursor] == tag else {
                fail(.argumentDoesNotMatchTypeTag)
                return false
            }
        }
        guard size <= buffer.count - count else {
            fail(.bufferTooSmall)
            return false
        }
        buffer[tagCursor] = tag
        tagCursor += 1
        return true
    }

    /// Writes bytes, a NUL and zero padding; the caller has checked the room.
    private mutating func writePaddedString(_ bytes: UnsafeRawBufferPointer) {
        copy(bytes, to: count)
        let total = Self.padded(bytes.count + 1)
        zero(count + bytes.count, total - bytes.count)
        count += total
    }

    private mutating func store(_ value: UInt32) {
        buffer.storeBytes(of: value.bigEndian, toByteOffset: count, as: UInt32.self)
        count += 4
    }

    private mutating func store(_ value: UInt64) {
        buffer.storeBytes(of: value.bigEndian, toByteOffset: count, as: UInt64.self)
        count += 8
    }

    private func copy(_ bytes: UnsafeRawBufferPointer, to offset: Int) {
        guard let source = bytes.baseAddress, let base = buffer.baseAddress, !bytes.isEmpty else { return }
        (base + offset).copyMemory(from: source, byteCount: bytes.count)
    }

    private func zero(_ offset: Int, _ size: Int) {
        var i = 0
        while i < size {
            buffer[offset + i] = 0
            i += 1
        }
    }
}
