// The OSCTransport module; see docs/ARCHITECTURE.md.
