import MIDI
import OSC

/// Turns MIDI events into OSC messages for one destination, without allocating.
///
/// Built once per destination from a scheme and the input ports' names. Every message whose
/// address depends only on the kind, port and channel (no `{note}` or `{controller}`) and whose
/// arguments have a fixed size is laid out at build time, for every port and channel, as its
/// complete prefix: the padded address and the padded type tag string. Writing one copies that
/// prefix and stores the arguments after it. The rest (per-event placeholders, blobs,
/// `data_bytes`, ports past the names) render their address from the compiled template.
///
/// The formatter is one reference to immutable tables, so copying it costs one retain.
public struct OSCEventFormatter: Sendable {
    private let tables: OSCFormatterTables

    /// The scheme the formatter was built from.
    public var scheme: OSCScheme { tables.scheme }
    /// Where SysEx bytes are read; without it SysEx events are not sent. The formatter never
    /// releases a slot: that stays the consumer's job.
    public var sysex: SysExStore? { tables.sysex }

    /// The mapping rules tried before the scheme (see ``OSCMappingFormatter``).
    public var mappings: [OSCMappingRule] { tables.mappings?.rules ?? [] }

    /// A formatter for `scheme`; `portNames[i]` names the input port whose events have `port == i`.
    /// An event that one of `mappings` matches is sent as that rule's message instead; pass
    /// ``OSCScheme/none`` to send nothing else.
    public init(
        scheme: OSCScheme, portNames: [String], sysex: SysExStore? = nil, mappings: [OSCMappingRule] = []
    ) {
        tables = OSCFormatterTables(
            scheme: scheme, portNames: portNames, sysex: sysex,
            mappings: mappings.isEmpty ? nil : OSCMappingFormatter(rules: mappings))
    }

    /// Appends the message for `event` to `writer`; `false` when no mapping matches and the
    /// scheme does not send this kind, a SysEx event's bytes are not available, or the writer failed (buffer too small).
    ///
    /// The writer is not reset: call `reset()` between packets, or write several messages into
    /// one bundle.
    public func write(_ event: MIDIEvent, into writer: inout OSCWriter) -> Bool {
        tables.write(event, into: &writer)
    }

    /// Writes the message for `event` at the start of `buffer` and returns its size; 0 when no
    /// mapping matches and the scheme does not send this kind, a SysEx event's bytes are not available, or it does not fit.
    public func write(_ event: MIDIEvent, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        tables.write(event, into: buffer)
    }

    /// The formatter without ownership of its tables, for a hot path that keeps the formatter
    /// alive elsewhere: copying it out of memory costs no retain and release, as copying the
    /// formatter does.
    public var unretained: Unretained { Unretained(tables: .passUnretained(tables)) }

    /// A formatter that does not own its tables: valid while the ``OSCEventFormatter`` it came
    /// from lives.
    public struct Unretained: BitwiseCopyable {
        @usableFromInline let tables: Unmanaged<OSCFormatterTables>

        /// As ``OSCEventFormatter/write(_:into:)-(_,UnsafeMutableRawBufferPointer)``.
        @inlinable
        public func write(_ event: MIDIEvent, into buffer: UnsafeMutableRawBufferPointer) -> Int {
            tables._withUnsafeGuaranteedRef { $0.write(event, into: buffer) }
        }
    }

    /// The message for `event` with its address rendered from the template, never from a
    /// precompiled prefix: the reference the fast path is tested against.
    func writeRendering(_ event: MIDIEvent, into writer: inout OSCWriter) -> Bool {
        tables.writeRendering(event, into: &writer)
    }
}

/// How one kind of event is written, indexed by `MIDIEventKind.rawValue`.
struct OSCKindPlan {
    var isSent = false
    var style = OSCArgumentStyle.int
    var usesDataBytes = false
    /// Into the fields table.
    var fields = OSCByteRange(offset: 0, count: 0)
    /// Into the segments table.
    var segments = OSCByteRange(offset: 0, count: 0)
    /// Whether the message is laid out in the prefix table (for ports below `portLimit`).
    var isPrefixed = false
    /// The prefix of port `p`, channel `c` is `prefixes[prefixBase + p * portStride + c * channelStride]`;
    /// a stride is 0 when the address does not depend on that value.
    var prefixBase = 0
    var portStride = 0
    var channelStride = 0
    /// Ports at or past this render their address (a name past the list is the port's index).
    var portLimit = 0
    /// The argument data after the prefix.
    var argumentBytes = 0
    /// Prefixed, with two int arguments that are the event's two data bytes (a note and its
    /// velocity, a controller and its value): the message the default and osmid schemes send
    /// for nearly every event, written by the shortest path.
    var isDataPair = false
}

/// A template segment whose literal text lives in the tables' text store.
enum OSCCompiledSegment {
    case literal(OSCByteRange)
    case placeholder(OSCAddressPlaceholder)
}
