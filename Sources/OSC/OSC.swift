// The OSC module; see docs/ARCHITECTURE.md.
