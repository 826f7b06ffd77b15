// Maps MIDI events to OSC messages and back; see docs/OSC.md.
