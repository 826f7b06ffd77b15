import Foundation
import TestSupport
import XCTest

/// The `aseqosc` binary as a user or script runs it: output, error texts and exit statuses.
final class CommandLineTests: XCTestCase {
    let binary = TestEnvironment.aseqoscBinary

    func testVersionPrintsNameAndVersion() throws {
        let result = try runProcess(binary, ["--version"])
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.standardOutput.hasPrefix("aseqosc 0."), result.standardOutput)
    }

    func testHelpListsEveryCommand() throws {
        let result = try runProcess(binary, ["--help"])
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.standardOutput.contains("ports"), result.standardOutput)
    }

    func testEachCommandHasItsOwnHelp() throws {
        let result = try runProcess(binary, ["ports", "--help"])
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.standardOutput.hasPrefix("usage: aseqosc ports"), result.standardOutput)
    }

    func testUnknownCommandExits64AndSaysWhereTheListIs() throws {
        let result = try runProcess(binary, ["frobnicate"])
        XCTAssertEqual(result.status, 64)
        XCTAssertEqual(
            result.standardError, "aseqosc: unknown command 'frobnicate'; `aseqosc --help` lists the commands\n")
    }

    func testNoCommandExits64() throws {
        XCTAssertEqual(try runProcess(binary, []).status, 64)
    }

    func testUnknownOptionExits64WithUsage() throws {
        let result = try runProcess(binary, ["ports", "--colour"])
        XCTAssertEqual(result.status, 64)
        XCTAssertEqual(
            result.standardError, "aseqosc: ports: unknown option '--colour'\nusage: aseqosc ports [--json]\n")
    }

    func testPortsWithoutSequencerExits69AndSaysHowToFixIt() throws {
        if TestEnvironment.hasSequencer { throw XCTSkip("this machine has a sequencer") }
        let result = try runProcess(binary, ["ports"])
        XCTAssertEqual(result.status, 69)
        XCTAssertTrue(result.standardError.contains("/dev/snd/seq does not exist"), result.standardError)
        XCTAssertTrue(result.standardError.contains("modprobe snd-seq"), result.standardError)
        XCTAssertFalse(result.standardError.contains("ALSA lib"), "libasound's own trace leaked")
        XCTAssertEqual(result.standardOutput, "")
    }
}
