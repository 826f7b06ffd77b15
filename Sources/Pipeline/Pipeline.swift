// The Pipeline module; see docs/ARCHITECTURE.md.
