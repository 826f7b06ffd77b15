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
        // and an HTTP and WebSocket server on one port, for the OSCQuery namespace: their headers
        // (Debian's libavahi-client-dev, libwebsockets-dev), the libraries loaded on first use, so
        // that what does not use them (`send`, a bridge on loopback) does not load them either.
        .target(name: "CAvahi", dependencies: ["CLazyLibrary"], cSettings: dwarf4),
        .target(name: "CWebSockets", dependencies: ["CLazyLibrary"], cSettings: dwarf4),
        // Opening a library on the first call into it, for the two above.
        .target(name: "CLazyLibrary", cSettings: dwarf4),

        // Pure Swift, no C, no Foundation.
        // Owned fixed-size memory for the hot paths' state, freed with its owner.
        .target(name: "Storage"),
        .target(name: "MIDI", dependencies: ["Storage"]),
        // The last value of every controller, program, bend and pressure per port and channel:
        // what a receiver that lost its state is sent again, and what OSCQuery shows (pure).
        .target(name: "ValueStore", dependencies: ["MIDI", "Storage"]),
        .target(name: "OSC"),
        // JSON5 in (configs), JSON out (status, `ports --json`): what Foundation did, without it.
        .target(name: "JSON"),
        // Threads, environment, files, clocks, POSIX errors and the log for the daemon and its commands.
        .target(name: "Platform", dependencies: ["CAffinity", "CGNUCalls"]),
        // Events copied out of the event threads for the status page's monitor.
        .target(name: "EventTap", dependencies: ["MIDI", "Storage"]),
        .target(name: "Pipeline", dependencies: ["MIDI", "Storage"]),
        // How MIDI and OSC name each other, both ways: address schemes, templates, argument
        // styles, mapping rules, the built-in address families (pure).
        .target(name: "OSCMapping", dependencies: ["MIDI", "OSC", "Storage"]),
        // What the bridge connects to, as values parsed from text: ALSA port specs and
        // addresses, OSC destinations, IP addresses, networks and allow-lists.
        .target(name: "Endpoints", dependencies: ["OSC"]),

        // CPU affinity, for keeping the threads that send to this machine on one CPU.
        .target(name: "CAffinity"),

        // The only modules that touch the C libraries.
        .target(name: "ALSASequencer", dependencies: ["CALSA", "Endpoints", "MIDI", "Platform", "Storage"]),
        .target(
            name: "OSCTransport", dependencies: ["CGNUCalls", "Endpoints", "MIDI", "OSC", "Platform", "Storage"]),
        // DNS-SD through avahi-daemon: announcing the OSC input, browsing for OSC services.
        .target(name: "Discovery", dependencies: ["CAvahi", "OSCTransport", "Platform"]),
        // OSCQuery: the namespace of what the OSC input accepts (pure), and its HTTP server.
        .target(name: "OSCQuery", dependencies: ["MIDI", "OSC", "OSCMapping", "JSON"]),
        .target(
            name: "OSCQueryHTTP",
            dependencies: ["CWebSockets", "Endpoints", "JSON", "OSC", "OSCQuery", "OSCTransport", "Platform"]),

        // The bridge, one module per job. Configuration: read a config, validate it, summarise
        // it (`aseqosc check`) and build each route's operator chain; pure, no threads, no ALSA
        // client, no socket.
        .target(
            name: "Config",
            dependencies: ["MIDI", "OSC", "OSCMapping", "Pipeline", "Endpoints", "JSON", "Platform"]),
        // `aseqosc send`: the SendMIDI vocabulary, its scripts and the player that paces them out.
        .target(name: "Send", dependencies: ["MIDI", "ALSASequencer", "Platform"]),
        // The running bridge, one module per direction and job. What both directions share: the
        // one ALSA client and its bindings, and the errors of starting.
        .target(
            name: "BridgeSession", dependencies: ["ALSASequencer", "Endpoints", "OSCTransport", "Platform"]),
        // Note recovery across a lossy network: the held-notes message, its sender's and its
        // receiver's sides.
        .target(
            name: "Recovery",
            dependencies: ["Config", "Endpoints", "MIDI", "OSC", "OSCMapping", "OSCTransport", "Storage"]),
        // MIDI -> OSC: where a MIDI event becomes an OSC message, for each destination's scheme
        // and mapping rules (pure).
        .target(name: "MIDIToOSC", dependencies: ["MIDI", "OSC", "OSCMapping", "Storage"]),
        // OSC -> MIDI: where an OSC message becomes MIDI events (pure).
        .target(name: "OSCToMIDI", dependencies: ["MIDI", "OSC", "OSCMapping", "Storage"]),
        // MIDI -> OSC as it runs: the input thread, which reads, runs the routes and sends, with
        // their destinations' formatters and senders, time-tagged bundles.
        .target(
            name: "MIDIToOSCRuntime",
            dependencies: [
                "MIDIToOSC", "BridgeSession", "Recovery", "Config", "Endpoints", "MIDI", "OSC", "Pipeline",
                "ALSASequencer", "OSCTransport", "Platform", "Storage", "ValueStore", "EventTap",
            ]),
        // OSC -> MIDI as it runs: the OSC thread, the translator, the routes, paced and scheduled
        // MIDI output.
        .target(
            name: "OSCToMIDIRuntime",
            dependencies: [
                "OSCToMIDI", "BridgeSession", "Recovery", "Config", "Endpoints", "MIDI", "OSC", "OSCMapping",
                "Pipeline",
                "ALSASequencer", "OSCTransport", "Platform", "Storage", "ValueStore", "EventTap",
            ]),
        // What `aseqosc status` shows: the running parts' counters read into values, with their
        // text and JSON forms.
        .target(
            name: "Status",
            dependencies: [
                "MIDIToOSCRuntime", "OSCToMIDIRuntime", "ALSASequencer", "MIDI", "OSC", "OSCTransport", "Pipeline",
                "Platform", "Storage",
            ]),
        // The daemon's dealings with its service manager and clients: systemd's notify protocol
        // and the control socket (`aseqosc status`, `aseqosc reload`).
        .target(name: "Service", dependencies: ["Platform"]),
        // The composition root: builds the runtime from a config, with its OSCQuery server,
        // announcement, control socket and service-manager notices; reloads it, reports its status.
        .target(
            name: "Bridge",
            dependencies: [
                "Config", "BridgeSession", "MIDIToOSCRuntime", "OSCToMIDIRuntime", "Recovery", "Status", "Discovery",
                "Endpoints",
                "MIDI", "OSCTransport", "Platform", "Service", "OSCQuery", "OSCQueryHTTP",
                "JSON", "ValueStore", "OSC", "OSCMapping", "MIDIToOSC", "EventTap",
            ]),
        // The command line: one type per subcommand; `run` parses its options and calls `Daemon`.
        .executableTarget(
            name: "aseqosc",
            dependencies: [
                "Bridge", "Config", "Send", "Service", "Discovery", "ALSASequencer", "Endpoints", "MIDI", "JSON",
                "Platform",
            ],
            // Inputs of the link, not sources (Sources/aseqosc/link).
            exclude: ["link"],
            // Bind every symbol at start: lazy binding makes the first event down each path
            // wait for the dynamic linker (milliseconds under emulation), a played note.
            linkerSettings: [.unsafeFlags(["-Xlinker", "-z", "-Xlinker", "now"] + smallStart)],
            // `aseqosc --version` and the package read the one VERSION file.
            plugins: ["VersionPlugin"]),
        .plugin(name: "VersionPlugin", capability: .buildTool()),

        // Benchmarks (BENCHMARKS.md): the in-process MIDI -> OSC hot path against liblo.
        .executableTarget(
            name: "aseqosc-bench",
            dependencies: [
                "MIDI", "OSC", "OSCMapping", "MIDIToOSC", "OSCToMIDI", "Pipeline", "Endpoints", "OSCTransport",
                "CLiblo", "CAllocationCounter",
            ],
            path: "Benchmarks/aseqosc-bench"),

        // Test-only: counts heap allocations per thread by interposing malloc and friends.
        .target(name: "CAllocationCounter"),
        // Test-only: finding the sequencer, the built binary and peer tools; running processes.
        .target(name: "TestSupport"),

        .testTarget(name: "StorageTests", dependencies: ["Storage", "CAllocationCounter", "TestSupport"]),
        .testTarget(name: "EventTapTests", dependencies: ["EventTap", "MIDI"]),
        .testTarget(name: "MIDITests", dependencies: ["MIDI", "TestSupport"]),
        .testTarget(
            name: "ValueStoreTests", dependencies: ["ValueStore", "MIDI", "CAllocationCounter", "TestSupport"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "EndpointsTests", dependencies: ["Endpoints"]),
        .testTarget(name: "DiscoveryTests", dependencies: ["Discovery", "TestSupport"]),
        .testTarget(
            name: "OSCQueryTests",
            dependencies: [
                "OSCQuery", "OSCQueryHTTP", "Endpoints", "OSCTransport", "OSCMapping", "MIDI", "JSON", "TestSupport",
            ]),
        .testTarget(name: "OSCTests", dependencies: ["OSC", "CLiblo", "CAllocationCounter", "TestSupport"]),
        // Both translations and their shared vocabulary: formatting, translating, rules, templates.
        .testTarget(
            name: "TranslationTests",
            dependencies: [
                "OSCMapping", "MIDIToOSC", "OSCToMIDI", "Recovery", "MIDI", "OSC", "Storage", "CLiblo",
                "CAllocationCounter", "TestSupport",
            ]),
        .testTarget(
            name: "OSCTransportTests",
            dependencies: [
                "OSCTransport", "Endpoints", "OSC", "CLiblo", "TestSupport", "CAllocationCounter", "Platform",
            ]),
        .testTarget(
            name: "PipelineTests",
            dependencies: ["Pipeline", "MIDI", "CAllocationCounter", "TestSupport"]),
        .testTarget(
            name: "ALSASequencerTests",
            dependencies: [
                "ALSASequencer", "Endpoints", "MIDI", "Platform", "Storage", "TestSupport", "CAllocationCounter",
            ]),
        .testTarget(name: "CLITests", dependencies: ["TestSupport"]),
        .testTarget(name: "ConfigTests", dependencies: ["Config", "Endpoints", "MIDI", "OSCMapping"]),
        .testTarget(name: "SendTests", dependencies: ["Send", "MIDI"]),
        // The directions as they run, in process: routes, senders, paced output, recovery, status.
        .testTarget(
            name: "RuntimeTests",
            dependencies: [
                "MIDIToOSCRuntime", "OSCToMIDIRuntime", "Recovery", "Status", "BridgeSession", "MIDIToOSC", "OSCToMIDI",
                "Config", "ALSASequencer", "Endpoints", "MIDI", "OSC", "OSCMapping", "OSCTransport", "Pipeline",
                "Platform", "Storage", "CALSA", "TestSupport", "CAllocationCounter", "Bridge", "ValueStore", "EventTap",
            ]),
        // End to end: the built binary against the kernel sequencer and peer tools.
        .testTarget(
            name: "BridgeTests",
            dependencies: [
                "Status", "ALSASequencer", "MIDI", "OSC", "Platform", "CLiblo", "TestSupport", "CAllocationCounter",
            ]),
    ],
    swiftLanguageModes: [.v6]
)

// What every command pays before its first line runs, cut at the link (BENCHMARKS.md,
// "Footprint"), with lld (in every Swift toolchain since 6.0; the package builds linked with it
// already) for what gold lacks:
// - The Swift runtime's C++ library linked in, not loaded (Sources/aseqosc/link says how).
// - The runtime's 24,000 relocations, mostly pointers in Swift's metadata, packed (`-z
//   pack-relative-relocs`, glibc 2.36): the dynamic loader reads 5 KB of them, not 560 KB.
// - No symbol exported: the toolchain's static-stdlib arguments export every one
//   (`-export-dynamic`), which nothing here looks up, 300 KB for the loader to hash into.
// - The functions the commands run side by side at the start of the code
//   (Sources/aseqosc/link/start-order.txt, written by scripts/start-order): the kernel maps a
//   binary's pages 64 KB around each one touched, so scattered they made most of it resident.
//   Every function has a section of its own in release builds (below), so that ours can be
//   placed one by one, as the standard library's are, and those never called are left out.
var smallStart: [String] {
    let link = packageFolder + "/Sources/aseqosc/link"
    return [
        "-L", link, "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
        "-Xlinker", "--no-export-dynamic",
        "-Xlinker", "--symbol-ordering-file=\(link)/start-order.txt", "-Xlinker", "--no-warn-symbol-ordering",
    ]
}
// This file's folder: the link runs wherever SwiftPM runs it.
var packageFolder: String { String(#filePath.dropLast("/Package.swift".count)) }

// Debug information valgrind 3.19 (Debian 12's, which the benchmarks count instructions with)
// can read: clang writes DWARF 5 by default, swiftc DWARF 4.
var dwarf4: [CSetting] { [.unsafeFlags(["-gdwarf-4"])] }

// Release builds leave out the run-time exclusivity checks (the compiler still enforces what it
// can prove statically; debug builds keep them, so the tests run with them too). Each event
// thread's state is stored properties of the class that thread owns, and the checks guarded each
// access on every event: about 190 of the 2,650 instructions a note took from the sequencer to
// the socket (docs/benchmark-history.md, "Issue 35").
for target in package.targets where target.type == .regular || target.type == .executable {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release)),
            // A section per function, for the link to place and drop (smallStart, above).
            .unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release)),
        ]
}
