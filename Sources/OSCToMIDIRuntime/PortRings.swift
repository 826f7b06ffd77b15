import BridgeSession
import Recovery
import Storage

/// A bounded ring of elements for each output port, all in one allocation: the ports' queues of
/// events waiting to be written (``PacedMIDIOutput``) and of scheduled events waiting for room
/// in the kernel (``ScheduledBacklog``).
///
/// Appending at the tail and removing from the head move nothing; an insertion or a removal in
/// the middle moves the elements after it one place. Owned by one thread; nothing here
/// allocates after `init`, and a slot's memory is touched only once it is used.
final class PortRings<Element: BitwiseCopyable> {
    /// Slots per port.
    let capacity: Int
    /// Elements held over all ports.
    private(set) var total = 0
    private let ports: Int
    private let slots: FixedBuffer<Element>
    private let heads: FixedBuffer<Int>
    private let counts: FixedBuffer<Int>

    init(ports: Int, capacity: Int) {
        self.ports = max(ports, 1)
        self.capacity = capacity
        slots = FixedBuffer(uninitializedCount: self.ports * capacity)
        heads = FixedBuffer(repeating: 0, count: self.ports)
        counts = FixedBuffer(repeating: 0, count: self.ports)
    }

    /// Elements `port` holds.
    @inline(__always)
    func count(_ port: Int) -> Int { counts[port] }

    /// `port`'s head; `port` holds at least one.
    @inline(__always)
    func first(_ port: Int) -> Element { slots[port * capacity + heads[port]] }

    /// The element `index` places after `port`'s head (below ``count(_:)``).
    @inline(__always)
    func element(_ index: Int, port: Int) -> Element { slots[slot(index, port: port)] }

    @inline(__always)
    private func slot(_ index: Int, port: Int) -> Int {
        var position = heads[port] + index
        if position >= capacity { position -= capacity }
        return port * capacity + position
    }

    /// Puts `element` at `port`'s tail; false when its slots are all taken.
    @discardableResult
    func append(_ element: Element, port: Int) -> Bool {
        insert(element, at: counts[port], port: port)
    }

    /// Puts `element` `index` places after `port`'s head (0: the new head), moving those from
    /// there back one place; false when its slots are all taken.
    @discardableResult
    func insert(_ element: Element, at index: Int, port: Int) -> Bool {
        let count = counts[port]
        guard count < capacity else { return false }
        var position = count
        while position > index {
            slots[slot(position, port: port)] = slots[slot(position - 1, port: port)]
            position -= 1
        }
        slots[slot(index, port: port)] = element
        counts[port] = count + 1
        total += 1
        return true
    }

    /// Removes `port`'s head; `port` holds at least one.
    func removeFirst(_ port: Int) {
        heads[port] = heads[port] + 1 == capacity ? 0 : heads[port] + 1
        counts[port] -= 1
        total -= 1
    }

    /// Removes and returns the element `index` places after `port`'s head.
    func remove(at index: Int, port: Int) -> Element {
        let removed = element(index, port: port)
        var position = index
        while position + 1 < counts[port] {
            slots[slot(position, port: port)] = slots[slot(position + 1, port: port)]
            position += 1
        }
        counts[port] -= 1
        total -= 1
        return removed
    }

    /// The position of `port`'s latest element that satisfies `predicate`.
    func lastIndex(port: Int, where predicate: (Element) -> Bool) -> Int? {
        var index = counts[port] - 1
        while index >= 0 {
            if predicate(element(index, port: port)) { return index }
            index -= 1
        }
        return nil
    }

    /// Empties every port, calling `body` with each element it held, head first.
    func removeAll(_ body: (Element) -> Void) {
        var port = 0
        while port < ports {
            while counts[port] > 0 {
                body(first(port))
                removeFirst(port)
            }
            port += 1
        }
    }
}
