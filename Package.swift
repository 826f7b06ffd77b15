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
        // The system's mDNS responder (avahi-daemon), for announcing and browsing OSC services.
        .systemLibrary(
            name: "CAvahi", pkgConfig: "avahi-client",
            providers: [.apt(["libavahi-client-dev"])]),

        // Pure Swift, no C, no Foundation.
        .target(name: "MIDI"),
        .target(name: "OSC"),
        // JSON5 in (configs), JSON out (status, `ports --json`): what Foundation did, without it.
        .target(name: "JSON"),
        // Threads, environment, files, clocks and POSIX errors for the daemon and its commands.
        .target(name: "Platform", dependencies: ["CSyscall"]),
        .target(name: "Pipeline", dependencies: ["MIDI", "OSC"]),
        // Both directions of the MIDI <-> OSC mapping: address schemes, templates, argument styles.
        .target(name: "MIDIOSC", dependencies: ["MIDI", "OSC"]),

        // The system calls of a forwarded event (both directions), made without libc's wrappers.
        .target(name: "CSyscall"),

        // The only modules that touch the C libraries.
        .target(name: "ALSASequencer", dependencies: ["CALSA", "CSyscall", "MIDI"]),
        .target(name: "OSCTransport", dependencies: ["CSyscall", "OSC"]),
        // DNS-SD through avahi-daemon: announcing the OSC input, browsing for OSC services.
        .target(name: "Discovery", dependencies: ["CAvahi", "Platform"]),

        // Composition root and the command line.
        .target(
            name: "Bridge",
            dependencies: [
                "MIDI", "OSC", "MIDIOSC", "Pipeline", "ALSASequencer", "OSCTransport", "JSON", "Platform",
            ]),
        .executableTarget(
            name: "aseqosc",
            dependencies: ["Bridge", "ALSASequencer", "MIDI", "OSC", "JSON", "Platform", "Discovery"],
            // Bind every symbol at start: lazy binding makes the first event down each path
            // wait for the dynamic linker (milliseconds under emulation), a played note.
            linkerSettings: [.unsafeFlags(["-Xlinker", "-z", "-Xlinker", "now"])],
            // `aseqosc --version` and the package read the one VERSION file.
            plugins: ["VersionPlugin"]),
        .plugin(name: "VersionPlugin", capability: .buildTool()),

        // Benchmarks (BENCHMARKS.md): the in-process MIDI -> OSC hot path against liblo.
        .executableTarget(
            name: "aseqosc-bench",
            dependencies: ["MIDI", "OSC", "MIDIOSC", "Pipeline", "OSCTransport", "CLiblo", "CAllocationCounter"],
            path: "Benchmarks/aseqosc-bench"),

        // Test-only: counts heap allocations per thread by interposing malloc and friends.
        .target(name: "CAllocationCounter"),
        // Test-only: finding the sequencer, the built binary and peer tools; running processes.
        .target(name: "TestSupport"),

        .testTarget(name: "MIDITests", dependencies: ["MIDI", "TestSupport"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "DiscoveryTests", dependencies: ["Discovery", "TestSupport"]),
        .testTarget(name: "OSCTests", dependencies: ["OSC", "CLiblo", "CAllocationCounter", "TestSupport"]),
        .testTarget(
            name: "MIDIOSCTests", dependencies: ["MIDIOSC", "MIDI", "OSC", "CLiblo", "CAllocationCounter", "TestSupport"]),
        .testTarget(
            name: "OSCTransportTests", dependencies: ["OSCTransport", "OSC", "CLiblo", "TestSupport", "CAllocationCounter"]),
        .testTarget(
            name: "PipelineTests",
            dependencies: ["Pipeline", "MIDI", "OSC", "CAllocationCounter", "TestSupport"]),
        .testTarget(
            name: "ALSASequencerTests",
            dependencies: ["ALSASequencer", "MIDI", "TestSupport"]),
        .testTarget(name: "CLITests", dependencies: ["TestSupport"]),
        .testTarget(
            name: "BridgeTests",
            dependencies: [
                "Bridge", "ALSASequencer", "MIDI", "MIDIOSC", "OSC", "OSCTransport", "Pipeline", "CALSA", "CLiblo", "JSON",
                "TestSupport", "CAllocationCounter",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
