import CALSA
import Glibc

/// A failed libasound call: the negative errno it returned and the call's name.
package struct ALSAError: Error, CustomStringConvertible, Equatable {
    /// The negative errno value libasound returned.
    package var code: Int32
    /// The libasound function that failed.
    package var call: String

    package init(code: Int32, call: String) {
        self.code = code
        self.call = call
    }

    package var description: String {
        if isSequencerMissing {
            return """
                the ALSA sequencer is not available: /dev/snd/seq does not exist. \
                Load it with `sudo modprobe snd-seq` (on a machine without sound support, \
                `make test-vm` runs aseqosc in a VM that has one)
                """
        }
        if isNotTheKernelSequencer {
            return """
                the ALSA sequencer 'default' is not the kernel's (hw): aseqosc reads and writes \
                the kernel sequencer itself; see the 'seq' definitions in ~/.asoundrc and /etc/asound.conf
                """
        }
        if code == -EACCES || code == -EPERM {
            return "\(call): permission denied on /dev/snd/seq; add your user to the 'audio' group"
        }
        return "\(call): \(String(cString: snd_strerror(code)))"
    }

    /// Whether `default` opened a sequencer other than the kernel's, which alsa.conf can define.
    var isNotTheKernelSequencer: Bool {
        call == "snd_seq_open" && code == -EPROTONOSUPPORT
    }

    /// Whether the failure means there is no sequencer device on this machine at all.
    var isSequencerMissing: Bool {
        call == "snd_seq_open" && (code == -ENOENT || code == -ENODEV || code == -ENXIO)
    }
}

/// Every libasound call goes through here, so errors carry the call that failed.
@inline(__always)
@discardableResult
func check(_ result: Int32, _ call: StaticString) throws(ALSAError) -> Int32 {
    guard result >= 0 else { throw ALSAError(code: result, call: "\(call)") }
    return result
}
