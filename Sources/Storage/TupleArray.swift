/// A fixed number of elements stored inline, in a tuple: the role of Swift 6.2's
/// `InlineArray`, for Swift 6.0 (Debian 13's compiler), which has none.
///
/// A plain value, copied whole like any struct, so small per-event scratch (captures, encoded
/// bytes, bit words) lives on the stack or inside its owner with no allocation. `Tuple` is a
/// tuple of `Element`s only, nested or not, which Swift lays out contiguously: the aliases below
/// (`TupleArray8<Int32>` for `InlineArray<8, Int32>`) name the sizes in use, so going back to
/// `InlineArray` is a rename. Like `InlineArray`, an index out of range traps.
public struct TupleArray<Element, Tuple> {
    @usableFromInline var elements: Tuple

    /// A value of `count` elements, each `value`.
    @inlinable
    public init(repeating value: Element) {
        assert(
            MemoryLayout<Tuple>.alignment == MemoryLayout<Element>.alignment
                && MemoryLayout<Tuple>.stride % MemoryLayout<Element>.stride == 0,
            "TupleArray's Tuple must be a tuple of its Element")
        // Stack memory for the tuple, filled element by element, then moved out whole.
        elements = withUnsafeTemporaryAllocation(of: Tuple.self, capacity: 1) { tuple in
            let base = tuple.baseAddress.unsafelyUnwrapped
            UnsafeMutableRawPointer(base).assumingMemoryBound(to: Element.self)
                .initialize(repeating: value, count: Self.count)
            return base.move()
        }
    }

    /// How many elements every value of this type holds.
    @inlinable
    public static var count: Int { MemoryLayout<Tuple>.stride / MemoryLayout<Element>.stride }

    /// How many elements there are.
    @inlinable
    public var count: Int { Self.count }

    /// `0..<count`.
    @inlinable
    public var indices: Range<Int> { 0..<Self.count }

    /// Element `index`, which must be below ``count``.
    @inlinable
    public subscript(index: Int) -> Element {
        @inline(__always)
        get {
            precondition(index >= 0 && index < Self.count, "TupleArray index out of range")
            return withUnsafeBytes(of: elements) {
                $0.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: Element.self)[index]
            }
        }
        @inline(__always)
        set {
            precondition(index >= 0 && index < Self.count, "TupleArray index out of range")
            withUnsafeMutableBytes(of: &elements) {
                $0.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: Element.self)[index] = newValue
            }
        }
    }
}

extension TupleArray: Sendable where Tuple: Sendable {}

public typealias Tuple4<T> = (T, T, T, T)
public typealias Tuple8<T> = (Tuple4<T>, Tuple4<T>)
public typealias Tuple16<T> = (Tuple8<T>, Tuple8<T>)
public typealias Tuple32<T> = (Tuple16<T>, Tuple16<T>)

public typealias TupleArray3<T> = TupleArray<T, (T, T, T)>
public typealias TupleArray4<T> = TupleArray<T, Tuple4<T>>
public typealias TupleArray8<T> = TupleArray<T, Tuple8<T>>
public typealias TupleArray12<T> = TupleArray<T, (Tuple4<T>, Tuple8<T>)>
public typealias TupleArray16<T> = TupleArray<T, Tuple16<T>>
public typealias TupleArray32<T> = TupleArray<T, Tuple32<T>>
public typealias TupleArray512<T> = TupleArray<T, Tuple16<Tuple32<T>>>
