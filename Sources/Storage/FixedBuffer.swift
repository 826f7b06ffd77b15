/// A fixed number of elements in memory of its own, allocated once and freed with the buffer.
///
/// For the state the hot paths index by number (per port, per slot): it reads and writes like
/// an array, but never copies, never grows and never checks uniqueness, so an access is one
/// address computation; and it cannot be copied, so the memory has exactly one owner and no
/// hand-paired deallocation. Indices are not checked in release builds: callers keep them
/// below ``count``.
///
/// Elements may be non-copyable (an `Atomic` per slot): they are made by
/// ``init(count:_:)`` and used in place through the subscript.
public struct FixedBuffer<Element: ~Copyable>: ~Copyable {
    @usableFromInline let base: UnsafeMutablePointer<Element>

    /// How many elements the buffer holds.
    public let count: Int

    /// A buffer of `count` elements, element `i` being `element(i)` (`count` below 1 still
    /// allocates one, so that a buffer per port exists with no port).
    @inlinable
    public init(count: Int, _ element: (Int) -> Element) {
        self.count = max(count, 0)
        base = .allocate(capacity: max(count, 1))
        for index in 0..<self.count { (base + index).initialize(to: element(index)) }
    }

    /// Element `index`, read and written in place.
    @inlinable
    public subscript(index: Int) -> Element {
        @inline(__always)
        unsafeAddress {
            assert(index >= 0 && index < count, "FixedBuffer index out of range")
            return UnsafePointer(base + index)
        }
        @inline(__always)
        nonmutating unsafeMutableAddress {
            assert(index >= 0 && index < count, "FixedBuffer index out of range")
            return base + index
        }
    }

    /// The first element's address, valid while the buffer lives: for code that walks the
    /// elements with a pointer, or hands them to C.
    @inlinable
    public var baseAddress: UnsafeMutablePointer<Element> { base }

    /// The elements as a buffer pointer, valid while the buffer lives.
    @inlinable
    public var unsafeElements: UnsafeMutableBufferPointer<Element> {
        UnsafeMutableBufferPointer(start: base, count: count)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }
}

extension FixedBuffer {
    /// A buffer of `count` elements, each `value`.
    @inlinable
    public init(repeating value: Element, count: Int) {
        self.count = max(count, 0)
        base = .allocate(capacity: max(count, 1))
        base.initialize(repeating: value, count: self.count)
    }
}

extension FixedBuffer where Element: BitwiseCopyable {
    /// A buffer of `count` elements left uninitialised until written, so untouched pages cost no
    /// memory (a queue sized for the worst case). Read only what was written.
    @inlinable
    public init(uninitializedCount count: Int) {
        self.count = max(count, 0)
        base = .allocate(capacity: max(count, 1))
    }
}
