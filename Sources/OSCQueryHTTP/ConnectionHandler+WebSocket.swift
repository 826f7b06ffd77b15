import CWebSockets
import Endpoints
import Glibc
import JSON
import OSC
import OSCQuery
import OSCTransport
import Platform
import Synchronization

/// The WebSocket side of the connections: the commands clients send, the frames queued for
/// them, and the ticks that send listeners their changed values and pages their updates.
extension ConnectionHandler {
    func established(_ wsi: OpaquePointer) {
        sessions[UInt(bitPattern: wsi)]?.isWebSocket = true
        counters.withLock {
            $0.webSockets += 1
            $0.webSocketsOpen += 1
        }
    }

    func closed(_ wsi: OpaquePointer) {
        let key = UInt(bitPattern: wsi)
        guard let session = sessions[key], session.isWebSocket else { return }
        for path in session.listens { stopListening(key, to: path) }
        let listens = UInt64(session.listens.count)
        session.listens = []
        endMonitoring(of: session)
        let watched = session.wantsStatus
        session.wantsStatus = false
        counters.withLock {
            $0.webSocketsOpen -= 1
            $0.listening -= listens
            if watched { $0.pagesWatching -= 1 }
        }
    }

    /// `session` no longer monitors (paused or gone): counted, and the taps turned off once no
    /// page monitors.
    private func endMonitoring(of session: Session) {
        guard session.wantsMonitor else { return }
        session.wantsMonitor = false
        counters.withLock {
            $0.pagesMonitoring -= 1
            if !session.wantsStatus { $0.pagesWatching -= 1 }
        }
        if !sessions.values.contains(where: \.wantsMonitor) { stopMonitoring() }
    }

    func received(_ wsi: OpaquePointer, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        let key = UInt(bitPattern: wsi)
        guard let session = sessions[key], session.closing == nil else { return -1 }
        if lws_frame_is_binary(wsi) != 0 {
            if lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0 {
                counters.withLock { $0.framesIgnored += 1 }
            }
            return 0
        }
        guard session.text.count + bytes.count <= OSCQueryCommand.textLimit else {
            counters.withLock { $0.closedOversized += 1 }
            var reason = Array("text frame over \(OSCQueryCommand.textLimit) bytes".utf8)
            lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, &reason, reason.count)
            return -1
        }
        session.text += bytes
        guard lws_is_final_fragment(wsi) != 0, lws_remaining_packet_payload(wsi) == 0 else { return 0 }
        let text = String(decoding: session.text, as: UTF8.self)
        session.text = []
        let methods = content.withLock { $0.namespace.root }
        switch OSCQueryCommand(text) {
        case .listen(let path) where methods.node(at: path.split(separator: "/"))?.method != nil:
            guard !session.listens.contains(path) else { return 0 }
            guard session.listens.count < limits.listensPerClient else {
                counters.withLock { $0.closedTooManyListens += 1 }
                var reason = Array("more than \(limits.listensPerClient) listens".utf8)
                lws_close_reason(wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION, &reason, reason.count)
                return -1
            }
            session.listens.insert(path)
            listeners[path, default: []].insert(key)
            counters.withLock { $0.listening += 1 }
            scheduleTick()
        case .status where page != nil, .monitor where page != nil:
            if !session.wantsStatus && !session.wantsMonitor { counters.withLock { $0.pagesWatching += 1 } }
            if case .status = OSCQueryCommand(text) {
                session.wantsStatus = true
                // The next tick sends it the status, changed or not.
                lastStatus = ""
                statusDue = 0
            } else {
                if !session.wantsMonitor { counters.withLock { $0.pagesMonitoring += 1 } }
                session.wantsMonitor = true
                if !monitoring {
                    monitoring = true
                    page?.source.setMonitoring(true)
                }
            }
            scheduleTick()
        case .pause where page != nil && session.wantsMonitor:
            endMonitoring(of: session)
        case .ignore(let path) where session.listens.contains(path):
            session.listens.remove(path)
            stopListening(key, to: path)
            counters.withLock { $0.listening -= 1 }
        default:
            counters.withLock { $0.framesIgnored += 1 }
        }
        return 0
    }

    private func stopListening(_ key: UInt, to path: String) {
        listeners[path]?.remove(key)
        if listeners[path]?.isEmpty == true { listeners[path] = nil }
    }

    /// Queues a frame for a WebSocket client; one that lets too much pile up is closed.
    private func queue(_ payload: [UInt8], binary: Bool, to key: UInt) {
        guard let session = sessions[key], session.isWebSocket, session.closing == nil else { return }
        guard session.queuedBytes + payload.count <= limits.queuedBytes else {
            session.closing = LWS_CLOSE_STATUS_POLICY_VIOLATION
            session.frames = []
            counters.withLock { $0.closedSlow += 1 }
            // A client that does not read is never writable: it is closed from here.
            lws_set_timeout(OpaquePointer(bitPattern: key), PENDING_TIMEOUT_USER_OK, -1)
            return
        }
        session.frames.append(([UInt8](repeating: 0, count: aseqosc_lws_pre) + payload, binary))
        session.queuedBytes += payload.count
        lws_callback_on_writable(OpaquePointer(bitPattern: key))
    }

    func writeFrame(_ wsi: OpaquePointer) -> Int32 {
        guard let session = sessions[UInt(bitPattern: wsi)] else { return -1 }
        if session.closing != nil { return -1 }
        guard session.framesStart < session.frames.count else { return 0 }
        let count = session.frames[session.framesStart].bytes.count - aseqosc_lws_pre
        let binary = session.frames[session.framesStart].binary
        let result = session.frames[session.framesStart].bytes.withUnsafeMutableBufferPointer { buffer in
            lws_write(wsi, buffer.baseAddress! + aseqosc_lws_pre, count, binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT)
        }
        guard result >= 0 else { return -1 }
        session.framesStart += 1
        session.queuedBytes -= count
        if session.framesStart == session.frames.count {
            session.frames = []
            session.framesStart = 0
        } else {
            if session.framesStart >= 64 {
                session.frames.removeFirst(session.framesStart)
                session.framesStart = 0
            }
            lws_callback_on_writable(wsi)
        }
        return 0
    }

    /// The next tick: in ``OSCQueryServer/Limits/listenMilliseconds`` while methods are
    /// listened to, in ``eventsInterval`` when only pages watch.
    private func scheduleTick() {
        guard !tickScheduled else { return }
        tickScheduled = true
        let interval = listeners.isEmpty ? Self.eventsInterval : UInt64(limits.listenMilliseconds) * 1_000_000
        aseqosc_ws_schedule(context, Int64(interval / 1000))
    }

    /// Sends each listened method whose value changed since the last tick its latest value.
    func sendChangedValues() {
        tickScheduled = false
        let watching = page != nil && sessions.values.contains { $0.wantsStatus || $0.wantsMonitor }
        if watching { sendPageUpdates() }
        guard let values else {
            if watching { scheduleTick() }
            return
        }
        var changed: [String] = []
        values.takeChanges { path in if listeners[path] != nil { changed.append(path) } }
        for path in changed {
            guard let arguments = values.value(at: path),
                let bytes = try? OSCPacket.message(OSCMessage(path, arguments)).serialize()
            else { continue }
            for key in listeners[path] ?? [] { queue(bytes, binary: true, to: key) }
            counters.withLock { $0.valuesSent += UInt64(listeners[path]?.count ?? 0) }
        }
        if !listeners.isEmpty || watching { scheduleTick() }
    }

    /// A CLOCK_MONOTONIC reading as the page's frames carry it: whole microseconds.
    private static func microseconds(_ nanoseconds: UInt64) -> JSONValue { .number(Double(nanoseconds / 1000)) }

    /// How often the pages are sent the events (50 ms) and the status (500 ms, when it changed).
    static let eventsInterval: UInt64 = 50_000_000
    static let statusInterval: UInt64 = 500_000_000

    /// To the pages watching: the events seen since they were last sent, and the status if it
    /// changed, each when due.
    private func sendPageUpdates() {
        guard let source = page?.source else { return }
        let watchers = sessions.filter { $0.value.isWebSocket && $0.value.closing == nil }
        let now = MonotonicClock.now()
        if monitoring && now >= eventsDue {
            eventsDue = now + Self.eventsInterval
            var lines: [JSONValue] = []
            var reads: [JSONValue] = []
            let dropped = source.takeMonitorLines { line, read in
                lines.append(.string(line))
                reads.append(read == 0 ? .null : Self.microseconds(read))
            }
            if !lines.isEmpty || dropped > 0 {
                // READ and SENT on one clock, this machine's CLOCK_MONOTONIC: how long each line
                // took inside the daemon, from its event's read to the frame, whatever the
                // page's clock says.
                let frame = Array(
                    JSONWriter.text(
                        .object([
                            "EVENTS": .array(lines), "READ": .array(reads),
                            "SENT": Self.microseconds(MonotonicClock.now()), "DROPPED": .number(Double(dropped)),
                        ])
                    ).utf8)
                for (key, session) in watchers where session.wantsMonitor { queue(frame, binary: false, to: key) }
            }
        }
        guard now >= statusDue else { return }
        statusDue = now + Self.statusInterval
        let status = source.statusJSON()
        guard status != lastStatus else { return }
        lastStatus = status
        let frame = Array(("{\"STATUS\":" + status + "}").utf8)
        for (key, session) in watchers where session.wantsStatus { queue(frame, binary: false, to: key) }
    }

    /// After a reload: PATH_REMOVED and PATH_ADDED (or one PATH_CHANGED) to every WebSocket
    /// client, and the listens on methods that are gone dropped.
    func tellNamespaceChanges() {
        let current = content.withLock { $0 }
        guard current.version != methodsVersion else { return }
        methodsVersion = current.version
        let now = current.namespace.root.methodPaths
        let changes = OSCQueryPathChange.changes(from: methods, to: now)
        for path in methods.subtracting(now) {
            for key in listeners[path] ?? [] {
                sessions[key]?.listens.remove(path)
                counters.withLock { $0.listening -= 1 }
            }
            listeners[path] = nil
        }
        methods = now
        let clients = sessions.filter { $0.value.isWebSocket }.map(\.key)
        for change in changes {
            let text = Array(change.text.utf8)
            for key in clients { queue(text, binary: false, to: key) }
            counters.withLock { $0.pathChangesSent += UInt64(clients.count) }
        }
    }
}
