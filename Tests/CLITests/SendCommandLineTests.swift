import Foundation
import TestSupport
import XCTest

/// `aseqosc send` where no sequencer is needed: its help, usage errors and command errors, which
/// are all found before the sequencer is opened.
final class SendCommandLineTests: XCTestCase {
    let binary = TestEnvironment.aseqoscBinary

    func testHelpListsTheCommandsAndTheTopLevelHelpListsSend() throws {
        let result = try runProcess(binary, ["send", "--help"])
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.standardOutput.hasPrefix("usage: aseqosc send --to PORTSPEC"), result.standardOutput)
        for line in ["  on note velocity ", "  syx bytes... ", "  panic ", "  off note [velocity] "] {
            XCTAssertTrue(result.standardOutput.contains(line), line)
        }
        XCTAssertTrue(try runProcess(binary, ["--help"]).standardOutput.contains("  send "))
    }

    func testEveryBadCommandIsReportedAndExits64() throws {
        let result = try runProcess(binary, ["send", "--to", "16:0", "on", "C4", "ch", "17", "frob", "cc", "7", "1"])
        XCTAssertEqual(result.status, 64)
        XCTAssertEqual(
            result.standardError,
            """
            aseqosc: send: 'on C4': missing velocity
            aseqosc: send: 'ch 17': channel 17 is out of range (1-16)
            aseqosc: send: 'frob': unknown command; `aseqosc send --help` lists the commands

            """)
        XCTAssertEqual(result.standardOutput, "")
    }

    func testMistakesOnStdinAreReportedWithTheirLine() throws {
        let result = try runProcess(binary, ["send", "--to", "16:0", "--file", "-"], input: "# setup\nch 2\non C4\n")
        XCTAssertEqual(result.status, 64)
        XCTAssertEqual(result.standardError, "aseqosc: send: stdin:3: 'on C4': missing velocity\n")
    }

    func testAFileThatCannotBeReadExits64() throws {
        let result = try runProcess(binary, ["send", "--to", "16:0", "--file", "/nonexistent/cmds.txt"])
        XCTAssertEqual(result.status, 64)
        XCTAssertEqual(
            result.standardError, "aseqosc: send: cannot read '/nonexistent/cmds.txt': No such file or directory\n")
    }

    func testWithoutToExits64AndSaysWhatToGive() throws {
        let result = try runProcess(binary, ["send", "on", "C4", "100"])
        XCTAssertEqual(result.status, 64)
        XCTAssertEqual(
            result.standardError,
            "aseqosc: send: --to PORTSPEC is required; ports are listed by `aseqosc ports`\n"
                + "usage: aseqosc send --to PORTSPEC [--middle-c N] [--file PATH|-] [COMMAND...]\n")
    }

    func testABadMiddleCOrAnUnknownOptionExits64() throws {
        let middleC = try runProcess(binary, ["send", "--to", "16:0", "--middle-c", "7", "on", "C4", "1"])
        XCTAssertEqual(middleC.status, 64)
        XCTAssertTrue(middleC.standardError.hasPrefix("aseqosc: send: --middle-c: '7' is not 3, 4 or 5\n"))
        let option = try runProcess(binary, ["send", "--to", "16:0", "--loud", "on", "C4", "1"])
        XCTAssertEqual(option.status, 64)
        XCTAssertTrue(option.standardError.hasPrefix("aseqosc: send: unknown option '--loud'\n"))
    }

    func testSendWithoutSequencerExits69AndSaysHowToFixIt() throws {
        if TestEnvironment.hasSequencer { throw XCTSkip("this machine has a sequencer") }
        let result = try runProcess(binary, ["send", "--to", "16:0", "on", "C4", "100"])
        XCTAssertEqual(result.status, 69)
        XCTAssertTrue(result.standardError.hasPrefix("aseqosc: send: the ALSA sequencer is not available"))
        XCTAssertTrue(result.standardError.contains("modprobe snd-seq"), result.standardError)
        XCTAssertFalse(result.standardError.contains("ALSA lib"), "libasound's own trace leaked")
    }
}
