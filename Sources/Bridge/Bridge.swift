// The Bridge module; see docs/ARCHITECTURE.md.
