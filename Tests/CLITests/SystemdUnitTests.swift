import Foundation
import TestSupport
import XCTest

/// The shipped units pass `systemd-analyze verify` and keep a low exposure score.
final class SystemdUnitTests: XCTestCase {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Copies a unit with ExecStart pointing at the built binary (verify checks it exists).
    func installedCopy(of name: String, as copyName: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("units-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let text = try String(contentsOf: Self.repository.appendingPathComponent("systemd/\(name)"), encoding: .utf8)
            .replacingOccurrences(of: "/usr/local/bin/aseqosc", with: TestEnvironment.aseqoscBinary)
        let copy = directory.appendingPathComponent(copyName)
        try text.write(to: copy, atomically: true, encoding: .utf8)
        return copy
    }

    /// The man pages the units' `Documentation=` names, rendered as the package renders them
    /// (scripts/manpages), in a folder `man` finds through `MANPATH`.
    func renderedManPages() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("man-\(UUID().uuidString)")
        let result = try runProcess(
            Self.repository.appendingPathComponent("scripts/manpages").path,
            [TestEnvironment.aseqoscBinary, folder.path], timeout: 120)
        XCTAssertEqual(result.status, 0, result.standardError)
        for (page, section) in [("aseqosc.1", "man1"), ("aseqosc.json5.5", "man5")] {
            let target = folder.appendingPathComponent(section)
            try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
            try FileManager.default.moveItem(
                at: folder.appendingPathComponent(page), to: target.appendingPathComponent(page))
        }
        return folder
    }

    func testUnitsPassSystemdAnalyzeVerify() throws {
        let analyze = try TestEnvironment.tool("systemd-analyze", package: "systemd")
        _ = try TestEnvironment.tool("pandoc", package: "pandoc")
        let manPages = try renderedManPages()
        defer { try? FileManager.default.removeItem(at: manPages) }
        for (name, copyName) in [
            ("aseqosc.service", "aseqosc.service"), ("aseqosc@.service", "aseqosc@studio.service"),
        ] {
            let unit = try installedCopy(of: name, as: copyName)
            let result = try runProcess(
                analyze, ["verify", unit.path], timeout: 60, environment: ["MANPATH": manPages.path])
            XCTAssertEqual(result.status, 0, "\(name): \(result.standardError)")
            let complaints = (result.standardOutput + result.standardError).split(separator: "\n")
                .filter { $0.contains(copyName) }
            XCTAssertEqual(complaints, [], "\(name)")
        }
    }

    func testServiceExposureScoreStaysLow() throws {
        let analyze = try TestEnvironment.tool("systemd-analyze", package: "systemd")
        let unit = try installedCopy(of: "aseqosc.service", as: "aseqosc.service")
        let result = try runProcess(analyze, ["security", "--offline=true", unit.path], timeout: 60)
        let line = try XCTUnwrap(
            result.standardOutput.split(separator: "\n").first { $0.contains("Overall exposure level") },
            result.standardOutput + result.standardError)
        let score = try XCTUnwrap(Double(line.split(separator: " ").first { Double($0) != nil } ?? ""), String(line))
        XCTAssertLessThanOrEqual(score, 2.0, String(line))
        print("systemd-analyze security: \(line)")
    }

    func testTypeNotifyWithWatchdogReloadAndRestart() throws {
        let text = try String(
            contentsOf: Self.repository.appendingPathComponent("systemd/aseqosc.service"), encoding: .utf8)
        for line in [
            "Type=notify", "WatchdogSec=10", "Restart=on-failure", "ExecReload=/usr/local/bin/aseqosc reload",
            "RestartPreventExitStatus=64 65", "Environment=SWIFT_BACKTRACE=enable=no", "StartLimitBurst=5",
            "DeviceAllow=/dev/snd/seq rw", "DevicePolicy=closed", "SupplementaryGroups=audio", "NoNewPrivileges=yes",
            "ProtectSystem=strict", "MemoryDenyWriteExecute=yes",
        ] {
            XCTAssertTrue(text.split(separator: "\n").contains(Substring(line)), line)
        }
    }

    func testBothUnitsGrantTheRealtimeThreadsTheDefaultPriorityAndLockedMemory() throws {
        for name in ["aseqosc.service", "aseqosc@.service"] {
            let lines = try String(
                contentsOf: Self.repository.appendingPathComponent("systemd/\(name)"), encoding: .utf8
            ).split(separator: "\n")
            // The ceiling is the default priority (RealtimeConfig.defaultPriority).
            for line in ["LimitRTPRIO=4", "LimitMEMLOCK=infinity", "SystemCallFilter=sched_setscheduler sched_setaffinity"] {
                XCTAssertTrue(lines.contains(Substring(line)), "\(name): \(line)")
            }
            XCTAssertFalse(lines.contains { $0.hasPrefix("RestrictRealtime=") }, name)
            // The deny list comes first: a later allow line puts sched_setscheduler and sched_setaffinity back.
            let deny = lines.firstIndex(of: "SystemCallFilter=~@privileged @resources")
            let allow = lines.firstIndex(of: "SystemCallFilter=sched_setscheduler sched_setaffinity")
            XCTAssertLessThan(try XCTUnwrap(deny), try XCTUnwrap(allow), name)
        }
    }
}
