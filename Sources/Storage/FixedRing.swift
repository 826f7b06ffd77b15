/// A bounded queue of elements in a ring of its own, for one thread: swift-nio's
/// `CircularBuffer` without the growing (an output port's queue of events waiting, the last
/// notes heard).
///
/// Appending at the tail and removing from the head move nothing; an insertion or a removal in
/// the middle moves the elements after it one place. The slots are allocated once, left
/// uninitialised until used (a queue sized for the worst case costs memory only as it fills),
/// and freed with the ring; nothing here allocates after `init`. Positions are counted from the
/// head: 0 is the oldest element.
///
/// A class, not a non-copyable struct: Swift 6.0 (Debian 13's) freed a non-copyable struct
/// held in a class twice, once for a copy it made to read a property.
public final class FixedRing<Element: BitwiseCopyable> {
    @usableFromInline let slots: FixedBuffer<Element>
    /// Where the head is in `slots`.
    @usableFromInline var head = 0
    /// How many elements the ring holds (``count``).
    @usableFromInline var held = 0

    /// An empty ring with room for `capacity` elements (any number, at least 1).
    @inlinable
    public init(capacity: Int) {
        slots = FixedBuffer(uninitializedCount: max(capacity, 1))
    }

    /// The most elements the ring holds.
    @inlinable
    public var capacity: Int { slots.count }

    /// How many elements the ring holds.
    @inlinable
    public var count: Int { held }

    @inlinable
    public var isEmpty: Bool { count == 0 }

    @inlinable
    public var isFull: Bool { count == capacity }

    /// The oldest element, nil when there is none.
    @inlinable
    public var first: Element? { count > 0 ? slots[head] : nil }

    /// The element `position` places after the head (below ``count``).
    @inlinable
    public subscript(position: Int) -> Element {
        @inline(__always)
        get {
            precondition(position >= 0 && position < count, "FixedRing position out of range")
            return slots[slot(position)]
        }
        @inline(__always)
        set {
            precondition(position >= 0 && position < count, "FixedRing position out of range")
            slots[slot(position)] = newValue
        }
    }

    /// Where the element `position` places after the head is in `slots`.
    @inlinable @inline(__always)
    func slot(_ position: Int) -> Int {
        let slot = head &+ position
        return slot >= capacity ? slot &- capacity : slot
    }

    /// Puts `element` at the tail; false when the ring is full.
    @inlinable
    @discardableResult
    public func append(_ element: Element) -> Bool {
        guard count < capacity else { return false }
        slots[slot(count)] = element
        held += 1
        return true
    }

    /// Puts `element` `position` places after the head (0: the new head; ``count``: the tail),
    /// moving those from there on back one place; false when the ring is full.
    @inlinable
    @discardableResult
    public func insert(_ element: Element, at position: Int) -> Bool {
        precondition(position >= 0 && position <= count, "FixedRing position out of range")
        guard count < capacity else { return false }
        var moving = count
        while moving > position {
            slots[slot(moving)] = slots[slot(moving - 1)]
            moving -= 1
        }
        slots[slot(position)] = element
        held += 1
        return true
    }

    /// Removes and returns the head; the ring holds at least one.
    @inlinable
    @discardableResult
    public func removeFirst() -> Element {
        precondition(count > 0, "FixedRing is empty")
        let removed = slots[head]
        head = head + 1 == capacity ? 0 : head + 1
        held -= 1
        return removed
    }

    /// Removes and returns the element `position` places after the head, moving those after it
    /// forward one place.
    @inlinable
    @discardableResult
    public func remove(at position: Int) -> Element {
        let removed = self[position]
        var moving = position
        while moving + 1 < count {
            slots[slot(moving)] = slots[slot(moving + 1)]
            moving += 1
        }
        held -= 1
        return removed
    }

    /// The position of the latest element that satisfies `predicate`, nil if none does.
    @inlinable
    public func lastIndex(where predicate: (Element) throws -> Bool) rethrows -> Int? {
        var position = count - 1
        while position >= 0 {
            if try predicate(slots[slot(position)]) { return position }
            position -= 1
        }
        return nil
    }

    /// Empties the ring.
    @inlinable
    public func removeAll() {
        head = 0
        held = 0
    }
}
