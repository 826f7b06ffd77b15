import OSC

/// Why a mapping rule cannot be used the other way round, to send MIDI events as OSC.
package enum OSCMappingReverseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No `args`, so the message's type tags are unknown.
    case argumentTypesMissing
    /// More arguments than a sent message may have.
    case tooManyArguments(Int)
    /// A `*` part, which names no one address.
    case wildcard(address: String)
    /// An address capture that no field sets.
    case captureNotSet(address: String, name: String)
    /// A number argument that no field sets.
    case argumentNotSet(index: Int, tag: UInt8)
    /// An `s`, `b` or `m` argument, which no MIDI value fills.
    case argumentNotNumeric(index: Int, tag: UInt8)
    /// A field reads an argument that `args` does not list.
    case argumentNotListed(index: Int)
    /// A field reads a capture the address does not have.
    case captureNotInAddress(address: String, index: Int)

    /// The rule's config key the problem is in.
    package var key: String {
        switch self {
        case .wildcard, .captureNotSet, .captureNotInAddress: "address"
        case .argumentTypesMissing, .tooManyArguments, .argumentNotSet, .argumentNotNumeric, .argumentNotListed:
            "args"
        }
    }

    package var description: String {
        func tag(_ byte: UInt8) -> Character { Character(Unicode.Scalar(byte)) }
        return switch self {
        case .argumentTypesMissing:
            "required to send MIDI as this mapping's OSC message: the argument types, e.g. \"f\""
        case .tooManyArguments(let count):
            "\(count) arguments; a mapping sent as OSC has at most \(OSCMappingRule.maximumSentArguments)"
        case .wildcard(let address):
            "'\(address)': a '*' part matches any address, so MIDI cannot be sent to it; name the part"
        case .captureNotSet(let address, let name):
            "'\(address)': no field sets {\(name)}, so MIDI cannot be sent to this address"
        case .argumentNotSet(let index, let byte):
            "argument {\(index)} ('\(tag(byte))') is set by no field, so MIDI cannot fill it in"
        case .argumentNotNumeric(let index, let byte):
            "argument {\(index)} is '\(tag(byte))'; a mapping sent as OSC carries numbers (i f h d) and T F N I only"
        case .argumentNotListed(let index):
            "a field reads argument {\(index)}, which args does not list"
        case .captureNotInAddress(let address, let index):
            "'\(address)': a field reads capture \(index), which the address does not have"
        }
    }
}

extension OSCMappingRule {
    /// The most arguments a mapping sent as OSC may have.
    package static let maximumSentArguments = 16

    /// Throws when the rule cannot be used to send MIDI events as OSC: every capture and every
    /// argument must be set by a field, and the argument types must be given and have no data
    /// but numbers.
    package func checkSendable() throws(OSCMappingReverseError) {
        guard let types = argumentTypes else { throw .argumentTypesMissing }
        guard types.count <= OSCMappingRule.maximumSentArguments else { throw .tooManyArguments(types.count) }
        if address.parts.contains(.any) { throw .wildcard(address: address.description) }
        var argumentsSet = Set<Int>()
        var capturesSet = Set<Int>()
        for value in values {
            switch value?.source {
            case .argument(let index): argumentsSet.insert(index)
            case .capture(let index): capturesSet.insert(index)
            case .constant, nil: break
            }
        }
        if let index = argumentsSet.first(where: { $0 < 0 || $0 >= types.count }) {
            throw .argumentNotListed(index: index)
        }
        if let index = capturesSet.first(where: { $0 < 0 || $0 >= address.captureNames.count }) {
            throw .captureNotInAddress(address: address.description, index: index)
        }
        for (index, name) in address.captureNames.enumerated() where !capturesSet.contains(index) {
            throw .captureNotSet(address: address.description, name: name)
        }
        for (index, tag) in types.enumerated() {
            switch tag {
            case OSCTypeTag.int32, OSCTypeTag.float32, OSCTypeTag.int64, OSCTypeTag.double:
                guard argumentsSet.contains(index) else { throw .argumentNotSet(index: index, tag: tag) }
            case OSCTypeTag.true, OSCTypeTag.false, OSCTypeTag.nil, OSCTypeTag.impulse:
                continue
            default:
                throw .argumentNotNumeric(index: index, tag: tag)
            }
        }
    }
}
