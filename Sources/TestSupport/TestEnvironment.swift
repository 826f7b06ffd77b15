import Foundation
import XCTest

/// Where the tests find the sequencer, the built binary and the peer tools.
package enum TestEnvironment {
    /// Whether this machine (or the VM the test runs in) has a kernel sequencer to talk to.
    package static var hasSequencer: Bool { access("/dev/snd/seq", R_OK | W_OK) == 0 }

    /// Skips the calling test where there is no sequencer. `scripts/test` runs every test class
    /// whose name ends in `ALSATests` again inside a VM that has one, and fails when none ran.
    package static func requireSequencer() throws {
        guard hasSequencer else {
            throw XCTSkip("no /dev/snd/seq here: scripts/test runs this in the ALSA VM")
        }
    }

    /// The build folder holding the test bundle and the `aseqosc` binary.
    static var buildDirectory: URL {
        if let override = ProcessInfo.processInfo.environment["ASEQOSC_BUILD_DIR"] {
            return URL(fileURLWithPath: override)
        }
        return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// The `aseqosc` executable built beside the tests.
    package static var aseqoscBinary: String { buildDirectory.appendingPathComponent("aseqosc").path }

    /// The full path of a peer tool such as `aseqdump`, or a skip naming its Debian package.
    package static func tool(_ name: String, package: String) throws -> String {
        for folder in ["/usr/bin", "/usr/local/bin", "/bin", "/usr/sbin"] {
            let path = folder + "/" + name
            if access(path, X_OK) == 0 { return path }
        }
        throw XCTSkip("\(name) is missing: apt-get install \(package)")
    }
}

/// Skips the calling test in debug builds: allocation counts are only meaningful for the
/// optimised code users run, and `make test` builds the tests in release.
package func requireOptimizedBuild() throws {
    #if DEBUG
        throw XCTSkip("allocation tests run in release builds: make test runs them")
    #endif
}
