import Glibc
import XCTest

@testable import ALSASequencer

/// The error a user meets when alsa.conf makes the `default` sequencer something other than the
/// kernel's, which aseqosc reads and writes itself (no VM needed: the text is the behaviour).
final class SequencerTypeErrorTests: XCTestCase {
    func testADefaultSequencerOtherThanTheKernelsIsNamedWithWhereToLook() {
        let error = ALSAError(code: -EPROTONOSUPPORT, call: "snd_seq_open")
        XCTAssertTrue(error.isNotTheKernelSequencer)
        XCTAssertFalse(error.isSequencerMissing)
        XCTAssertEqual(
            error.description,
            "the ALSA sequencer 'default' is not the kernel's (hw): aseqosc reads and writes the kernel "
                + "sequencer itself; see the 'seq' definitions in ~/.asoundrc and /etc/asound.conf")
        XCTAssertFalse(ALSAError(code: -EPROTONOSUPPORT, call: "snd_seq_create_simple_port").isNotTheKernelSequencer)
    }
}
