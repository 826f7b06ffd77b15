import MIDI

/// Assembles 14-bit control changes, RPNs and NRPNs with a ``ControllerAssembler`` (see there
/// for what is consumed, rewritten and passed).
///
/// The assembler's state lives in a buffer that copies of this value share; a ``Route`` gives
/// its chain fresh buffers, so each route assembles on its own.
package struct ControllerAssembly: Sendable {
    /// The assembler's configuration, kept to build fresh state.
    let fourteenBitControllers: [UInt8]
    let dataEntry: ControllerAssembler.DataEntry
    private let state: State

    /// Assembles pairs of `fourteenBitControllers` (0...31) and RPN/NRPN data entry.
    package init(fourteenBitControllers: [UInt8] = [], dataEntry: ControllerAssembler.DataEntry = .msbThenLSB) {
        self.fourteenBitControllers = fourteenBitControllers
        self.dataEntry = dataEntry
        state = State(ControllerAssembler(fourteenBitControllers: fourteenBitControllers, dataEntry: dataEntry))
    }

    /// The same configuration with its own, empty state.
    func withFreshState() -> ControllerAssembly {
        ControllerAssembly(fourteenBitControllers: fourteenBitControllers, dataEntry: dataEntry)
    }

    /// Consumes, rewrites or passes `event`; `false` when consumed.
    package func process(_ event: inout MIDIEvent) -> Bool {
        state.assembler.process(&event)
    }

    /// Forgets held halves and parameter selections.
    func reset() {
        state.assembler.reset()
    }

    // @unchecked Sendable: mutated only by the one thread running the route that owns it; a
    // route is built on one thread and then handed to the input thread, never shared.
    private final class State: @unchecked Sendable {
        var assembler: ControllerAssembler
        package init(_ assembler: ControllerAssembler) { self.assembler = assembler }
    }
}
