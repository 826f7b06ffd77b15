import MIDI
import Storage
import Synchronization

/// The last values of a set of ports, one ``PortValues`` per port: what one destination was
/// sent of each input port (MIDI -> OSC), or what each output port was sent (OSC -> MIDI).
///
/// Sized when the bridge is built (``PortValues/memory(parameterCapacity:)`` per port) and
/// never grown: a port added at reload gets a new store. Its threads are its tables'.
package final class LastValueStore: @unchecked Sendable {
    // @unchecked Sendable: `tableOfPort` is written only in init.

    /// The tables, in the order of the ports given.
    package let ports: [PortValues]
    /// The index in ``ports`` of each port number (0...255), -1 for a port not kept.
    private let tableOfPort = FixedBuffer<Int16>(repeating: -1, count: 256)

    /// A store for ports `0 ..< portCount`, each keeping up to `parameterCapacity` RPN and NRPN
    /// values.
    package convenience init(portCount: Int, parameterCapacity: Int = 256) {
        self.init(ports: (0..<max(portCount, 0)).map { UInt16($0) }, parameterCapacity: parameterCapacity)
    }

    /// A store for the port numbers `numbers` (each below 256), each keeping up to
    /// `parameterCapacity` RPN and NRPN values; a number given twice gets one table.
    package init(ports numbers: [UInt16], parameterCapacity: Int = 256) {
        var tables: [PortValues] = []
        for number in numbers where number < 256 && tableOfPort[Int(number)] < 0 {
            tableOfPort[Int(number)] = Int16(tables.count)
            tables.append(PortValues(port: number, parameterCapacity: parameterCapacity))
        }
        ports = tables
    }

    /// The table of `port` (0 ..< `ports.count`).
    package subscript(port: Int) -> PortValues { ports[port] }

    /// The table of port number `number`, if the store keeps it.
    func table(ofPort number: UInt16) -> PortValues? {
        guard number < 256 else { return nil }
        let index = Int(tableOfPort[Int(number)])
        return index < 0 ? nil : ports[index]
    }

    /// Keeps what `event` sets, in the table of its ``MIDIEvent/port``; an event of a port the
    /// store does not keep is ignored. On the direction's own thread only.
    @inline(__always)
    package func record(_ event: MIDIEvent) {
        let index = Int(tableOfPort[Int(event.port & 0xFF)])
        guard index >= 0, event.port < 256 else { return }
        ports[index].record(event)
    }

    /// Forgets every value of `port` (an index in ``ports``), which went away. On the
    /// direction's own thread only.
    func clear(port: Int) {
        guard port >= 0 && port < ports.count else { return }
        ports[port].clear()
    }

    /// Values sent again so far by replays from this store.
    package var replayed: Int { replayedCount.load(ordering: .relaxed) }
    package let replayedCount = Atomic<Int>(0)
}

/// Where a replay of a whole ``LastValueStore`` has got to: its ports in order, each walked
/// with a ``ReplayCursor``.
package struct StoreReplayCursor: Hashable, Sendable {
    var port = 0
    var cursor = ReplayCursor()

    /// A cursor at the start of the first port.
    package init() {}
}

extension LastValueStore {
    /// Calls `body` with up to `limit` stored values as events, from `position` on, port by
    /// port, and moves `position` past them; returns whether the walk is over (every port
    /// done). Counts what it sent in ``replayed``. On the writing thread.
    package func replay(_ position: inout StoreReplayCursor, limit: Int, _ body: (MIDIEvent) -> Void) -> Bool {
        var left = limit
        while left > 0 && position.port < ports.count {
            let sent = ports[position.port].replay(&position.cursor, limit: left, body)
            left -= sent
            replayedCount.add(sent, ordering: .relaxed)
            if position.cursor.isFinished {
                position.port += 1
                position.cursor = ReplayCursor()
            }
        }
        return position.port >= ports.count
    }
}
