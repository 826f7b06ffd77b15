import Recovery
import Storage

/// A bounded queue of elements for each output port, each a ``FixedRing``: the ports' queues
/// of events waiting to be written (``PacedMIDIOutput``) and of scheduled events waiting for
/// room in the kernel (``ScheduledBacklog``), with how many they hold in all.
///
/// Owned by one thread; nothing here allocates after `init`, and a slot's memory is touched
/// only once it is used.
package final class PortQueues<Element: BitwiseCopyable> {
    /// Slots per port.
    package let capacity: Int
    /// Elements held over all ports.
    private(set) var total = 0
    private let ports: Int
    private let rings: FixedBuffer<FixedRing<Element>>

    package init(ports: Int, capacity: Int) {
        self.ports = max(ports, 1)
        self.capacity = capacity
        rings = FixedBuffer(count: self.ports) { _ in FixedRing(capacity: capacity) }
    }

    /// Elements `port` holds.
    @inline(__always)
    func count(_ port: Int) -> Int { rings[port].count }

    /// `port`'s head; `port` holds at least one.
    @inline(__always)
    func first(_ port: Int) -> Element { rings[port][0] }

    /// The element `index` places after `port`'s head (below ``count(_:)``).
    @inline(__always)
    func element(_ index: Int, port: Int) -> Element { rings[port][index] }

    /// Puts `element` at `port`'s tail; false when its slots are all taken.
    @discardableResult
    func append(_ element: Element, port: Int) -> Bool {
        guard rings[port].append(element) else { return false }
        total += 1
        return true
    }

    /// Puts `element` `index` places after `port`'s head (0: the new head), moving those from
    /// there back one place; false when its slots are all taken.
    @discardableResult
    func insert(_ element: Element, at index: Int, port: Int) -> Bool {
        guard rings[port].insert(element, at: index) else { return false }
        total += 1
        return true
    }

    /// Removes `port`'s head; `port` holds at least one.
    func removeFirst(_ port: Int) {
        rings[port].removeFirst()
        total -= 1
    }

    /// Removes and returns the element `index` places after `port`'s head.
    func remove(at index: Int, port: Int) -> Element {
        total -= 1
        return rings[port].remove(at: index)
    }

    /// The position of `port`'s latest element that satisfies `predicate`.
    func lastIndex(port: Int, where predicate: (Element) -> Bool) -> Int? {
        rings[port].lastIndex(where: predicate)
    }

    /// Empties every port, calling `body` with each element it held, head first.
    func removeAll(_ body: (Element) -> Void) {
        var port = 0
        while port < ports {
            while !rings[port].isEmpty { body(rings[port].removeFirst()) }
            port += 1
        }
        total = 0
    }
}
