/// The built-in address families the OSC input accepts beside the mapping rules, which a config
/// may switch off one by one (docs/OSC.md has their tables).
package enum OSCAddressFamily: String, Sendable, Hashable, CaseIterable {
    /// `/midi/{port}/...`, the default scheme's mirror.
    case `default`
    /// `/midi ,m` and `/sysex ,b`.
    case touchosc
    /// `/{port}/{command}`, as osmid's o2m.
    case osmid
}
