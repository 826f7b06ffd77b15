import Foundation
import TestSupport
import XCTest

/// `make install` and `make uninstall` into a DESTDIR: what lands where, that an edited config
/// survives both, and that the installed units point at the installed binary.
final class InstallTests: XCTestCase {
    static let repository = SystemdUnitTests.repository

    func make(_ arguments: [String]) throws -> ProcessResult {
        let make = try TestEnvironment.tool("make", package: "make")
        return try runProcess(
            make, ["-C", Self.repository.path, "BIN=\(TestEnvironment.aseqoscBinary)"] + arguments, timeout: 60)
    }

    func testInstallPutsEverythingInPlaceAndUninstallKeepsAnEditedConfig() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("destdir-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let install = try make(["install", "DESTDIR=\(root.path)", "PREFIX=/usr"])
        XCTAssertEqual(install.status, 0, install.standardError)

        let files = [
            "usr/bin/aseqosc", "etc/systemd/system/aseqosc.service", "etc/systemd/system/aseqosc@.service",
            "usr/share/aseqosc/aseqosc.json5", "etc/aseqosc/aseqosc.json5", "usr/share/doc/aseqosc/README.md",
            "usr/share/doc/aseqosc/CONFIG.md", "usr/share/aseqosc/examples/osmid-compatible.json5",
        ]
        for file in files {
            XCTAssertTrue(FileManager.default.fileExists(atPath: root.appendingPathComponent(file).path), file)
        }
        let unit = try String(
            contentsOf: root.appendingPathComponent("etc/systemd/system/aseqosc.service"), encoding: .utf8)
        XCTAssertTrue(unit.contains("ExecStart=/usr/bin/aseqosc run --config /etc/aseqosc/aseqosc.json5"), unit)
        let version = try runProcess(root.appendingPathComponent("usr/bin/aseqosc").path, ["--version"])
        XCTAssertEqual(version.status, 0)

        // An edited config survives a second install and the uninstall.
        let config = root.appendingPathComponent("etc/aseqosc/aseqosc.json5")
        try "{ client: \"studio\" }\n".write(to: config, atomically: true, encoding: .utf8)
        XCTAssertEqual(try make(["install", "DESTDIR=\(root.path)", "PREFIX=/usr"]).status, 0)
        XCTAssertEqual(try String(contentsOf: config, encoding: .utf8), "{ client: \"studio\" }\n")
        let uninstall = try make(["uninstall", "DESTDIR=\(root.path)", "PREFIX=/usr"])
        XCTAssertEqual(uninstall.status, 0, uninstall.standardError)
        XCTAssertTrue(
            uninstall.standardOutput.contains("kept /etc/aseqosc/aseqosc.json5 (edited)"), uninstall.standardOutput)
        XCTAssertTrue(FileManager.default.fileExists(atPath: config.path))
        for file in files where file != "etc/aseqosc/aseqosc.json5" {
            XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent(file).path), file)
        }
    }
}
