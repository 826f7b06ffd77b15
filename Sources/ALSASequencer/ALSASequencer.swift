// The ALSASequencer module; see docs/ARCHITECTURE.md.
