/// One value in memory of its own, freed with the cell, read and written in place with no
/// dynamic exclusivity check.
///
/// For the per-event state of a class that one thread owns: a class's `var` pays a run-time
/// exclusivity check on every access, which a `let` cell does not. The owner keeps accesses
/// from overlapping, as it does for any memory it alone touches. The value may be non-copyable
/// (state that owns a ``FixedBuffer``): it is then only used in place.
public struct UncheckedCell<Value: ~Copyable>: ~Copyable {
    @usableFromInline let base: UnsafeMutablePointer<Value>

    @inlinable
    public init(_ value: consuming Value) {
        base = .allocate(capacity: 1)
        base.initialize(to: value)
    }

    /// The value, read and written in place.
    @inlinable
    public var value: Value {
        @inline(__always)
        unsafeAddress { UnsafePointer(base) }
        @inline(__always)
        nonmutating unsafeMutableAddress { base }
    }

    /// The value's address, valid while the cell lives: for handing it to C.
    @inlinable
    public var address: UnsafeMutablePointer<Value> { base }

    deinit {
        base.deinitialize(count: 1)
        base.deallocate()
    }
}
