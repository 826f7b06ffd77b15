# Sourced by Benchmarks/mappings.sh and Benchmarks/growth.sh to build this tree's aseqosc-bench
# sources in an older tree (a REF before issue 35): the OSC -> MIDI path as it was then, with
# its address cache (Benchmarks/lib/BridgePathBeforeTable.swift), and the one MIDIOSC module
# that older trees have where this one has OSCMapping, MIDIToOSC and OSCToMIDI.
before_table_bench() {
  local bench=$1/Benchmarks/aseqosc-bench
  cp Benchmarks/lib/BridgePathBeforeTable.swift "$bench/MappingsBridgePath.swift"
  sed -i -E 's/^(@testable )?import (OSCMapping|MIDIToOSC|OSCToMIDI)$/\1import MIDIOSC/' "$bench"/*.swift
}
