// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "aseqosc",
    products: [
        .executable(name: "aseqosc", targets: ["aseqosc"])
    ],
    targets: [
        // C at the edges: the two system libraries, each behind a module map and a shim.
        .systemLibrary(
            name: "CALSA", pkgConfig: "alsa",
            providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(
            name: "CLiblo", pkgConfig: "liblo",
            providers: [.apt(["liblo-dev"])]),
        // glibc's sendmmsg, recvmmsg and pthread_setname_np, declared as _GNU_SOURCE would.
        .systemLibrary(name: "CGNUCalls"),
        // The system's mDNS responder (avahi-daemon), for announcing and browsing OSC services,
        // and an embedded HTTP server, for the OSCQuery namespace: their headers (Debian's
        // libavahi-client-dev, libmicrohttpd-dev), the libraries loaded on first use, so that
        // what does not use them (`send`, a bridge on loopback) does not load them either.
        .target(name: "CAvahi", dependencies: ["CLazyLibrary"], cSettings: dwarf4),
        .target(name: "CMicroHTTPD", dependencies: ["CLazyLibrary"], cSettings: dwarf4),
        // Opening a library on the first call into it, for the two above.
        .target(name: "CLazyLibrary", cSettings: dwarf4),

        // Pure Swift, no C, no Foundation.
        // Owned fixed-size memory for the hot paths' state, freed with its owner.
        .target(name: "Storage"),
        .target(name: "MIDI", dependencies: ["Storage"]),
        .target(name: "OSC"),
        // JSON5 in (configs), JSON out (status, `ports --json`): what Foundation did, without it.
        .target(name: "JSON"),
        // Threads, environment, files, clocks, POSIX errors and the log for the daemon and its commands.
        .target(name: "Platform", dependencies: ["CAffinity", "CGNUCalls"]),
        .target(name: "Pipeline", dependencies: ["MIDI", "OSC", "Storage"]),
        // Both directions of the MIDI <-> OSC mapping: address schemes, templates, argument styles.
        .target(name: "MIDIOSC", dependencies: ["MIDI", "OSC", "Storage"]),
        // What the bridge connects to, as values parsed from text: ALSA port specs and
        // addresses, OSC destinations, IP addresses, networks and allow-lists.
        .target(name: "Endpoints", dependencies: ["OSC"]),

        // CPU affinity, for keeping the threads that send to this machine on one CPU.
        .target(name: "CAffinity"),

        // The only modules that touch the C libraries.
        .target(name: "ALSASequencer", dependencies: ["CALSA", "Endpoints", "MIDI", "Platform", "Storage"]),
        .target(name: "OSCTransport", dependencies: ["CGNUCalls", "Endpoints", "OSC", "Platform", "Storage"]),
        // DNS-SD through avahi-daemon: announcing the OSC input, browsing for OSC services.
        .target(name: "Discovery", dependencies: ["CAvahi", "OSCTransport", "Platform"]),
        // OSCQuery: the namespace of what the OSC input accepts (pure), and its HTTP server.
        .target(name: "OSCQuery", dependencies: ["MIDI", "MIDIOSC", "JSON"]),
        .target(name: "OSCQueryHTTP", dependencies: ["CMicroHTTPD", "Endpoints", "OSCQuery", "OSCTransport"]),

        // The bridge, one module per job. Configuration: read a config, validate it, summarise
        // it (`aseqosc check`) and build each route's operator chain; pure, no threads, no ALSA
        // client, no socket.
        .target(
            name: "Config",
            dependencies: ["MIDI", "OSC", "MIDIOSC", "Pipeline", "Endpoints", "JSON", "Platform"]),
        // `aseqosc send`: the SendMIDI vocabulary, its scripts and the player that paces them out.
        .target(name: "Send", dependencies: ["MIDI", "ALSASequencer", "Platform"]),
        // The running bridge: the two directions (MIDI -> OSC, OSC -> MIDI), their threads, the
        // routes and destinations, paced MIDI output, and the status their counters make.
        .target(
            name: "BridgeRuntime",
            dependencies: [
                "Config", "Endpoints", "MIDI", "OSC", "MIDIOSC", "Pipeline", "ALSASequencer", "OSCTransport",
                "Platform", "Storage",
            ]),
        // The daemon's dealings with its service manager and clients: systemd's notify protocol
        // and the control socket (`aseqosc status`, `aseqosc reload`).
        .target(name: "Service", dependencies: ["Platform"]),
        // The composition root: builds the runtime from a config, reloads it, reports its status.
        .target(
            name: "Bridge",
            dependencies: [
                "Config", "BridgeRuntime", "Discovery", "Endpoints", "MIDI", "Pipeline", "OSCTransport", "Platform",
            ]),
        // The command line: one type per subcommand.
        .executableTarget(
            name: "aseqosc",
            dependencies: [
                "Bridge", "Config", "Send", "BridgeRuntime", "Service", "Discovery", "OSCQuery", "OSCQueryHTTP",
                "ALSASequencer", "Endpoints", "MIDI", "MIDIOSC", "JSON", "Platform",
            ],
            // Bind every symbol at start: lazy binding makes the first event down each path
            // wait for the dynamic linker (milliseconds under emulation), a played note.
            linkerSettings: [.unsafeFlags(["-Xlinker", "-z", "-Xlinker", "now"])],
            // `aseqosc --version` and the package read the one VERSION file.
            plugins: ["VersionPlugin"]),
        .plugin(name: "VersionPlugin", capability: .buildTool()),

        // Benchmarks (BENCHMARKS.md): the in-process MIDI -> OSC hot path against liblo.
        .executableTarget(
            name: "aseqosc-bench",
            dependencies: [
                "MIDI", "OSC", "MIDIOSC", "Pipeline", "Endpoints", "OSCTransport", "CLiblo", "CAllocationCounter",
            ],
            path: "Benchmarks/aseqosc-bench"),

        // Test-only: counts heap allocations per thread by interposing malloc and friends.
        .target(name: "CAllocationCounter"),
        // Test-only: finding the sequencer, the built binary and peer tools; running processes.
        .target(name: "TestSupport"),

        .testTarget(name: "StorageTests", dependencies: ["Storage"]),
        .testTarget(name: "MIDITests", dependencies: ["MIDI", "TestSupport"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "EndpointsTests", dependencies: ["Endpoints"]),
        .testTarget(name: "DiscoveryTests", dependencies: ["Discovery", "TestSupport"]),
        .testTarget(
            name: "OSCQueryTests",
            dependencies: [
                "OSCQuery", "OSCQueryHTTP", "Endpoints", "OSCTransport", "MIDIOSC", "MIDI", "JSON", "TestSupport",
            ]),
        .testTarget(name: "OSCTests", dependencies: ["OSC", "CLiblo", "CAllocationCounter", "TestSupport"]),
        .testTarget(
            name: "MIDIOSCTests",
            dependencies: ["MIDIOSC", "MIDI", "OSC", "CLiblo", "CAllocationCounter", "TestSupport"]),
        .testTarget(
            name: "OSCTransportTests",
            dependencies: ["OSCTransport", "Endpoints", "OSC", "CLiblo", "TestSupport", "CAllocationCounter"]),
        .testTarget(
            name: "PipelineTests",
            dependencies: ["Pipeline", "MIDI", "OSC", "CAllocationCounter", "TestSupport"]),
        .testTarget(
            name: "ALSASequencerTests",
            dependencies: [
                "ALSASequencer", "Endpoints", "MIDI", "Platform", "Storage", "TestSupport", "CAllocationCounter",
            ]),
        .testTarget(name: "CLITests", dependencies: ["TestSupport"]),
        .testTarget(name: "ConfigTests", dependencies: ["Config", "Endpoints", "MIDI", "MIDIOSC"]),
        .testTarget(name: "SendTests", dependencies: ["Send", "MIDI"]),
        .testTarget(
            name: "BridgeRuntimeTests",
            dependencies: [
                "BridgeRuntime", "Config", "ALSASequencer", "Endpoints", "MIDI", "MIDIOSC", "OSCTransport", "Pipeline", "Platform",
                "CALSA", "TestSupport", "CAllocationCounter",
            ]),
        // End to end: the built binary against the kernel sequencer and peer tools.
        .testTarget(
            name: "BridgeTests",
            dependencies: [
                "BridgeRuntime", "ALSASequencer", "MIDI", "OSC", "Platform", "CLiblo", "TestSupport", "CAllocationCounter",
            ]),
    ],
    swiftLanguageModes: [.v6]
)

// Debug information valgrind 3.19 (Debian 12's, which the benchmarks count instructions with)
// can read: clang writes DWARF 5 by default, swiftc DWARF 4.
var dwarf4: [CSetting] { [.unsafeFlags(["-gdwarf-4"])] }
