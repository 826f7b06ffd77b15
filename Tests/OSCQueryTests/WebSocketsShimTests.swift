import CWebSockets
import Glibc
import Synchronization
import Testing

/// The libwebsockets shim on its own (the server does not use it yet): the library loads on
/// first use, listens on loopback on a port the kernel chose, and an HTTP GET reaches the one
/// protocol's callback, which answers on the same port the WebSocket side will use.
@Suite(.serialized) struct WebSocketsShimTests {
    final class State: Sendable {
        let requests = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
    }

    static let callback: aseqosc_ws_callback = { user, wsi, reason, _, _, _ in
        guard reason == LWS_CALLBACK_HTTP, let wsi else { return 0 }
        let state = Unmanaged<State>.fromOpaque(user!).takeUnretainedValue()
        state.requests.add(1, ordering: .relaxed)
        let pre = aseqosc_lws_pre
        var buffer = [UInt8](repeating: 0, count: pre + 512)
        return buffer.withUnsafeMutableBufferPointer { bytes -> Int32 in
            let start = bytes.baseAddress! + pre
            let end = bytes.baseAddress! + bytes.count
            var p: UnsafeMutablePointer<UInt8>? = start
            guard lws_add_http_common_headers(wsi, 200, "text/plain", 3, &p, end) == 0,
                lws_finalize_write_http_header(wsi, start, &p, end) == 0
            else { return -1 }
            start[0] = UInt8(ascii: "o")
            start[1] = UInt8(ascii: "k")
            start[2] = UInt8(ascii: "\n")
            guard lws_write(wsi, start, 3, LWS_WRITE_HTTP_FINAL) == 3 else { return -1 }
            return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
        }
    }

    @Test func anHTTPGetReachesTheProtocolsCallbackOnThePortTheKernelChose() throws {
        let state = State()
        var limits = aseqosc_ws_limits(
            connections: 8, idle_seconds: 5, request_bytes: 16384, ping_seconds: 20, hangup_seconds: 30)
        let user = Unmanaged.passUnretained(state).toOpaque()
        let ws = try #require(aseqosc_ws_start("127.0.0.1", 0, 0, &limits, Self.callback, nil, user))
        let port = aseqosc_ws_port(ws)
        #expect(port > 0)
        nonisolated(unsafe) let context = ws
        let thread = Thread { while !state.stop.load(ordering: .relaxed) { _ = aseqosc_ws_service(context) } }
        defer {
            state.stop.store(true, ordering: .relaxed)
            aseqosc_ws_wake(context)
            thread.join()
            aseqosc_ws_destroy(context)
        }
        let response = try OSCQueryServerTests.get("/?HOST_INFO", port: UInt16(port))
        #expect(response.status == 200 && response.body == "ok\n")
        #expect(state.requests.load(ordering: .relaxed) == 1)
    }

    /// A plain pthread, as the server's own service thread will be.
    final class Thread: @unchecked Sendable {
        private var handle = pthread_t()
        init(_ body: @escaping @Sendable () -> Void) {
            let box = Unmanaged.passRetained(Box(body)).toOpaque()
            pthread_create(
                &handle, nil,
                { pointer in
                    Unmanaged<Box>.fromOpaque(pointer!).takeRetainedValue().body()
                    return nil
                }, box)
        }
        func join() { pthread_join(handle, nil) }
        final class Box {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
    }
}
