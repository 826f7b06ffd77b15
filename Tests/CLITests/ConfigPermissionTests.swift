import Foundation
import TestSupport
import XCTest

/// A config the daemon's user may not read: the error names that user and the fix, once (the
/// path is not repeated), and the run exits 65 so systemd does not restart it in a loop.
final class ConfigPermissionTests: XCTestCase {
    func testUnreadableConfigNamesTheUserAndTheFix() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to run the binary as another user") }
        let setpriv = try TestEnvironment.tool("setpriv", package: "util-linux")
        let directory = URL(fileURLWithPath: "/tmp/aseqosc-permission-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        chmod(directory.path, 0o755)
        let config = directory.appendingPathComponent("aseqosc.json5")
        try "{ inputs: [{ name: \"in\" }] }\n".write(to: config, atomically: true, encoding: .utf8)
        chmod(config.path, 0o600)
        let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups", TestEnvironment.aseqoscBinary]

        let byHand = try runProcess(setpriv, nobody + ["run", "--config", config.path])
        XCTAssertEqual(byHand.status, 65, byHand.standardError)
        XCTAssertTrue(
            byHand.standardError.contains(
                "config refused: \(config.path): cannot be read by user 'nobody': Permission denied "
                    + "(make it readable: `chmod 644 \(config.path)`)"), byHand.standardError)

        let asService = try runProcess(
            setpriv, nobody + ["run", "--config", config.path], environment: ["INVOCATION_ID": "0123"])
        XCTAssertEqual(asService.status, 65)
        XCTAssertTrue(
            asService.standardError.contains(
                "the service runs as the dynamic user 'nobody', uid 65534, which cannot own files: "
                    + "make the file readable by others, `sudo chmod 644 \(config.path)`"), asService.standardError)
        XCTAssertEqual(asService.standardError.components(separatedBy: config.path).count, 3, "the path, then the fix")
    }

    func testVersionComesFromTheVersionFile() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let version = try String(contentsOf: repository.appendingPathComponent("VERSION"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let result = try runProcess(TestEnvironment.aseqoscBinary, ["--version"])
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.standardOutput, "aseqosc \(version)\n")
    }
}
