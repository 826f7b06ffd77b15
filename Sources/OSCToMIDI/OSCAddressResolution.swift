import MIDI
import OSCMapping
import Storage

/// What an address resolved to (see ``OSCToMIDITranslator/resolve(_:)``): a plain value, kept
/// for every literal address in ``OSCAddressTable``.
package struct AddressResolution {
    enum Action: UInt8 {
        case unknownAddress
        /// Known, but wrong whatever the arguments (a channel outside 1...16).
        case malformed
        /// `kind` to `outputs`, no arguments read.
        case argumentless
        /// One argument 0...127 as data 1.
        case dataByte
        /// Two arguments 0...127 as data 1 and 2.
        case twoDataBytes
        /// One argument 0...16383 as the value.
        case songPosition
        /// One argument -8192...8191 as the value.
        case pitchBend
        /// A parameter (0...31 for cc14, else 0...16383) and a value 0...16383.
        case parameter
        /// One SysEx blob to `outputs`.
        case sysexBlob
        /// TouchOSC's `/midi ,m`.
        case touchOSCMIDI
        /// o2m's `raw` to `outputs`.
        case raw
        /// o2m's channel messages: `expected` arguments, the channel first.
        case osmidChannel
        /// `ruleCount` (1 or 2) mapping rules, tried in order.
        case rules
        /// More mapping rules match than a resolution holds: every rule is matched per message.
        case manyRules
    }

    var action: Action
    var kind: MIDIEventKind
    var channel: UInt8
    var expected: UInt8 = 0
    var ruleCount: UInt8 = 0
    var firstRule: UInt16 = 0
    var secondRule: UInt16 = 0
    var outputs: OSCToMIDITranslator.OutputSet
    var firstCaptures = TupleArray8<Int32>(repeating: 0)
    var secondCaptures = TupleArray8<Int32>(repeating: 0)

    init(
        _ action: Action = .unknownAddress, kind: MIDIEventKind = .clock, channel: UInt8 = 0,
        outputs: OSCToMIDITranslator.OutputSet = .init()
    ) {
        self.action = action
        self.kind = kind
        self.channel = channel
        self.outputs = outputs
    }

    /// Records a matching rule; false when two are recorded already.
    mutating func addRule(_ index: Int, _ captures: TupleArray8<Int32>) -> Bool {
        guard index <= Int(UInt16.max) else { return false }
        switch ruleCount {
        case 0:
            firstRule = UInt16(truncatingIfNeeded: index)
            firstCaptures = captures
        case 1:
            secondRule = UInt16(truncatingIfNeeded: index)
            secondCaptures = captures
        default:
            return false
        }
        ruleCount += 1
        return true
    }
}

extension OSCToMIDITranslator {
    /// What `address` stands for, found from the address alone: rules (through
    /// ``ruleIndex``), families and output names. Whatever depends on the arguments is left to
    /// ``perform(_:_:_:_:)``.
    package func resolve(_ address: UnsafeRawBufferPointer) -> AddressResolution {
        var resolution = AddressResolution()
        if !rules.isEmpty {
            // The first three matches, in order: a resolution holds two, a third means many.
            let matches = ruleIndex.matches(address)
            var m = 0
            while m < matches.count {
                if !resolution.addRule(matches.rule(m), matches.captures(m)) { return AddressResolution(.manyRules) }
                m += 1
            }
        }
        if resolution.ruleCount > 0 {
            resolution.action = .rules
            return resolution
        }
        let parts = AddressParts(address)
        if acceptsDefault, parts.count >= 3, parts.count <= 4, parts.equals(0, "midi") {
            return resolveDefault(parts)
        }
        if acceptsTouchOSC, parts.count == 1 {
            if parts.equals(0, "midi") { return AddressResolution(.touchOSCMIDI) }
            if parts.equals(0, "sysex") { return AddressResolution(.sysexBlob, outputs: .port(0)) }
        }
        if acceptsOsmid, parts.count == 2 {
            return resolveOsmid(parts)
        }
        return AddressResolution(.unknownAddress)
    }
}
