// aseqosc-bench: in-process throughput of the MIDI -> OSC hot path, against liblo building the
// same OSC messages in the same run. See BENCHMARKS.md for how to run it and what it reports.
//
//   swift run -c release -j 2 aseqosc-bench [--quick] [--repetitions N]
import CAllocationCounter
import Foundation
import MIDI
import Pipeline

var repetitions = 7
var scale = 1
var only: String? = nil
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--quick": scale = 10
    case "--only": only = arguments.popFirst()
    case "--repetitions":
        guard let value = arguments.popFirst().flatMap(Int.init), value > 0 else {
            FileHandle.standardError.write("--repetitions needs a positive number\n".data(using: .utf8)!)
            exit(64)
        }
        repetitions = value
    case "-h", "--help":
        print(
            """
            usage: aseqosc-bench [--quick] [--repetitions N] [--only KEY]
              --quick          a tenth of the events (a smoke test)
              --repetitions N  timed runs per workload (default 7); the median is reported
              --only KEY       run one workload and print its line only, for profiling:
                               pipeline_aseqosc, pipeline_liblo, encode_aseqosc, encode_liblo,
                               osc_to_midi (OSC in: validate, translate, route; no ALSA write),
                               fanout_N (one route to N loopback UDP destinations, a flush every
                               64 events), fanout_lone_N (a flush after every event),
                               routes_N (N forwarding routes, a destination each), operators_N
                               (one route of N operators), sysex_N (SysEx messages of N bytes)
                               mappings_N, mappings_template_N (N = 10, 100, 1000), mappings_spray_1000,
                               mappings_load_N (N = 100, 1000): see Benchmarks/mappings.sh
            """)
        exit(0)
    default:
        FileHandle.standardError.write("unknown argument '\(argument)'; try --help\n".data(using: .utf8)!)
        exit(64)
    }
}
#if DEBUG
    FileHandle.standardError.write("warning: debug build; run with swift run -c release\n".data(using: .utf8)!)
#endif

// Pin to one core so the numbers do not include migrations. Glibc's module hides sched_setaffinity (it needs _GNU_SOURCE), so it is
// looked up by name.
typealias SetAffinity = @convention(c) (pid_t, Int, UnsafeRawPointer) -> Int32
let setAffinity = dlsym(nil, "sched_setaffinity").map { unsafeBitCast($0, to: SetAffinity.self) }
func allowCPUs(_ mask: UInt8) -> Bool {
    var set = cpu_set_t()
    withUnsafeMutableBytes(of: &set) { $0[0] = mask }
    return withUnsafeBytes(of: &set) { setAffinity?(0, $0.count, $0.baseAddress!) == 0 }
}
let pinned = allowCPUs(1)

/// The MIDI -> OSC workload an `--only` key names, or nil for any other key: fanout_N,
/// fanout_lone_N, routes_N, operators_N, sysex_N.
func growthWorkload(_ key: String, events: Int) -> FanOutWorkload? {
    let parts = key.split(separator: "_")
    guard parts.count >= 2, let n = Int(parts[parts.count - 1]), n >= 0 else { return nil }
    switch parts.dropLast().joined(separator: "_") {
    case "fanout" where n > 0: return FanOutWorkload(destinations: n, events: events, flushEvery: 64)
    case "fanout_lone" where n > 0: return FanOutWorkload(destinations: n, events: events, flushEvery: 1)
    case "routes" where n > 0: return FanOutWorkload(destinations: 1, events: events, flushEvery: 64, routes: n)
    case "operators": return FanOutWorkload(destinations: 1, events: events, flushEvery: 64, operators: n)
    case "sysex" where n >= 2: return FanOutWorkload(destinations: 1, events: events, flushEvery: 64, sysexBytes: n)
    default: return nil
    }
}

if let only, let fanOut = growthWorkload(only, events: 100_000 / scale) {
    // Routes, destinations, operators, SysEx over real loopback sockets (Benchmarks/fanout.sh,
    // Benchmarks/growth.sh).
    let summary = measure(only, key: only, events: fanOut.events, repetitions: repetitions, fanOut.run)
    print(
        "\(only): \(Int(summary.eventsPerSecond)) events/s, \(summary.nanosecondsPerEvent) ns/event, "
            + "\(summary.allocationsPerEvent) allocations/event")
    exit(0)
}

if let only {
    let workload = PipelineWorkload(events: 2_000_000 / scale)
    let outputs = workload.outputs()
    let oscToMIDI = OSCToMIDIWorkload(events: 2_000_000 / scale)
    var work: [String: (Int, () -> Int)] = [
        "pipeline_aseqosc": (workload.events, workload.runAseqosc),
        "pipeline_liblo": (workload.events, workload.runLiblo),
        "encode_aseqosc": (outputs.count, { workload.encodeAseqosc(outputs) }),
        "encode_liblo": (outputs.count, { workload.encodeLiblo(outputs) }),
        "osc_to_midi": (oscToMIDI.events, oscToMIDI.run),
    ]
    // OSC -> MIDI through mapping rules (Benchmarks/mappings.sh).
    if let mappings = MappingsWorkload.workload(named: only, scale: scale) { work[only] = mappings }
    guard let (events, body) = work[only] else {
        FileHandle.standardError.write("unknown workload '\(only)'; try --help\n".data(using: .utf8)!)
        exit(64)
    }
    let summary = measure(only, key: only, events: events, repetitions: repetitions, body)
    print("\(only): \(Int(summary.eventsPerSecond)) events/s, \(summary.nanosecondsPerEvent) ns/event")
    exit(0)
}

let pipelineEvents = 2_000_000 / scale
let workload = PipelineWorkload(events: pipelineEvents)
let outputs = workload.outputs()
var results: [Summary] = []

results.append(
    measure("pipeline, aseqosc encode", key: "pipeline_aseqosc", events: workload.events, repetitions: repetitions) {
        workload.runAseqosc()
    })
results.append(
    measure("pipeline, liblo encode", key: "pipeline_liblo", events: workload.events, repetitions: repetitions) {
        workload.runLiblo()
    })
results.append(
    measure("encode only, aseqosc", key: "encode_aseqosc", events: outputs.count, repetitions: repetitions) {
        workload.encodeAseqosc(outputs)
    })
results.append(
    measure("encode only, liblo", key: "encode_liblo", events: outputs.count, repetitions: repetitions) {
        workload.encodeLiblo(outputs)
    })

// MARK: Report

func millions(_ value: Double) -> String { String(format: "%.2f M", value / 1e6) }
func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}
func padLeft(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
}

let byKey = Dictionary(uniqueKeysWithValues: results.map { ($0.key, $0) })
let pipelineRatio = byKey["pipeline_aseqosc"]!.eventsPerSecond / byKey["pipeline_liblo"]!.eventsPerSecond
let pipelineCPURatio = byKey["pipeline_aseqosc"]!.eventsPerCPUSecond / byKey["pipeline_liblo"]!.eventsPerCPUSecond
let encodeRatio = byKey["encode_aseqosc"]!.eventsPerSecond / byKey["encode_liblo"]!.eventsPerSecond

print(
    """
    aseqosc-bench: \(repetitions) repetitions, medians; \(pinned ? "pinned to CPU 0" : "not pinned"); \
    malloc counted: \(aseqosc_allocations_interposed() == 1 ? "yes" : "NO")
    pipeline: \(workload.events) wire events (\(PipelineWorkload.cycleOutputs) of every \
    \(PipelineWorkload.cycleEvents) pass the route), parse -> kind filter, transpose, velocity curve, \
    note-off normalisation -> OSC (default scheme)

    ratios (same run)
      pipeline events/s, aseqosc / liblo     \(String(format: "%.1fx", pipelineRatio)) \
    (per CPU second: \(String(format: "%.1fx", pipelineCPURatio)))
      encode-only msgs/s, aseqosc / liblo    \(String(format: "%.1fx", encodeRatio))

    """)
print(
    pad("workload", 34) + padLeft("events/s", 12) + padLeft("per CPU s", 12) + padLeft("ns/event", 10)
        + padLeft("allocs/event", 14) + padLeft("spread", 9))
for summary in results {
    print(
        pad(summary.name, 34) + padLeft(millions(summary.eventsPerSecond), 12)
            + padLeft(millions(summary.eventsPerCPUSecond), 12)
            + padLeft(String(format: "%.1f", summary.nanosecondsPerEvent), 10)
            + padLeft(String(format: "%.3f", summary.allocationsPerEvent), 14)
            + padLeft(String(format: "%.0f%%", summary.spread * 100), 9))
}

var fields: [String] = ["\"repetitions\":\(repetitions)"]
for summary in results {
    fields.append("\"\(summary.key)_eps\":\(Int(summary.eventsPerSecond))")
    fields.append("\"\(summary.key)_ns\":\(String(format: "%.2f", summary.nanosecondsPerEvent))")
    fields.append("\"\(summary.key)_allocs\":\(String(format: "%.3f", summary.allocationsPerEvent))")
}
fields.append("\"pipeline_ratio\":\(String(format: "%.2f", pipelineRatio))")
fields.append("\"encode_ratio\":\(String(format: "%.2f", encodeRatio))")
print("\nBENCH {" + fields.joined(separator: ",") + "}")
print("checksum \(sink)")
