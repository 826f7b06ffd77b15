import ALSASequencer
import Glibc
import MIDI
import Platform

/// Spaces writes to a hardware MIDI port so a burst never overflows the kernel's buffer.
///
/// The kernel's sequencer-to-rawmidi bridge (`snd-seq-midi`) does not wait when a port's 4 KiB
/// output buffer is full: it drops the event ("MIDI output buffer overrun"). A DIN port drains
/// 3125 bytes a second, so `panic` (about 4 KiB) or a long SysEx would lose its tail. The pacer
/// lets a burst of ``burst`` bytes through at once, then no more than the wire carries.
package struct WirePacer: Sendable {
    /// Nanoseconds one byte takes on a 31250 baud wire (10 bits a byte).
    package static let nanosecondsPerByte: UInt64 = 320_000
    /// Bytes that may be in the port's buffer at once: half the kernel's 4096.
    let burst: Int
    // When everything written so far will have left the wire, in the caller's clock.
    private var idleAt: UInt64 = 0

    package init(burst: Int = 2048) {
        self.burst = burst
    }

    /// When `count` bytes may be written, given the time is `now`; assumes they then are.
    package mutating func time(toWrite count: Int, now: UInt64) -> UInt64 {
        // Writing must wait until the bytes still queued plus these fit in the burst (a message
        // larger than the burst waits for an empty buffer).
        let room = UInt64(max(burst - count, 0)) * Self.nanosecondsPerByte
        let at = max(now, idleAt > room ? idleAt - room : 0)
        idleAt = max(idleAt, at) + UInt64(count) * Self.nanosecondsPerByte
        return at
    }
}

/// Plays ``SendStep``s out of one port of a sequencer client, in blocking mode, at the times
/// the steps ask for.
package final class SendPlayer {
    private let client: SequencerClient
    private let port: UInt8
    private var pacer: WirePacer?
    private var encoder = MIDIByteEncoder()
    // The previous absolute timestamp and when it was reached, for the next one.
    private var lastTimestamp: (millisecondOfDay: Int, reachedAt: UInt64)?

    /// A player writing from `port` of `client` to its subscribers; `paced` spaces the bytes as
    /// a DIN port drains them (see ``WirePacer``).
    package init(client: SequencerClient, port: UInt8, paced: Bool) {
        self.client = client
        self.port = port
        self.pacer = paced ? WirePacer() : nil
    }

    /// Performs every step in order; returns when the last event has been handed to the kernel.
    package func play(_ steps: [SendStep]) throws(ALSAError) {
        for step in steps {
            switch step {
            case .event(let event):
                pace(encoder.encode(event).count)
                try client.send(event, from: port)
            case .sysex(let bytes):
                try sendSysEx(bytes)
            case .delay(let milliseconds):
                MonotonicClock.sleep(until: MonotonicClock.now() + UInt64(milliseconds) * 1_000_000)
            case .timestamp(let millisecondOfDay):
                wait(forTimestamp: millisecondOfDay)
            case .clock(let bpm, let ticks):
                try playClock(bpm: bpm, ticks: ticks)
            }
        }
    }

    private func sendSysEx(_ bytes: [UInt8]) throws(ALSAError) {
        // In pieces of the kernel's own size, each paced, rather than all at once.
        let chunk = SequencerClient.sysexChunkSize
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunk, bytes.count)
            pace(end - offset)
            let sent = bytes.withUnsafeBytes { all in
                Result { () throws(ALSAError) in
                    try client.send(
                        MIDIEvent(.sysex), from: port, sysexBytes: UnsafeRawBufferPointer(rebasing: all[offset..<end]))
                }
            }
            try sent.get()
            offset = end
        }
    }

    private func wait(forTimestamp millisecondOfDay: Int) {
        if let last = lastTimestamp {
            var wanted = millisecondOfDay - last.millisecondOfDay
            if wanted < 0 { wanted += 24 * 60 * 60 * 1000 }  // past midnight
            MonotonicClock.sleep(until: last.reachedAt + UInt64(wanted) * 1_000_000)
        }
        lastTimestamp = (millisecondOfDay, MonotonicClock.now())
    }

    private func playClock(bpm: Double, ticks: Int?) throws(ALSAError) {
        // Deadlines from one start, so the tempo does not drift with the time sends take.
        let interval = 60e9 / bpm / 24
        let start = MonotonicClock.now()
        var tick = 0
        while ticks.map({ tick < $0 }) ?? true {
            MonotonicClock.sleep(until: start + UInt64(Double(tick) * interval))
            pace(1)
            try client.send(MIDIEvent(.clock), from: port)
            tick += 1
        }
    }

    private func pace(_ count: Int) {
        guard pacer != nil else { return }
        MonotonicClock.sleep(until: pacer!.time(toWrite: count, now: MonotonicClock.now()))
    }
}
