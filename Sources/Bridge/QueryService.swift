import Config
import Discovery
import Endpoints
import JSON
import OSCQuery
import OSCQueryHTTP
import OSCTransport
import Platform
import Synchronization

/// The daemon's OSCQuery server: started when the config's OSC input has `osc.query`, given the
/// new namespace at each reload, started again on another address or port, stopped with the
/// input. A server that cannot start (its port taken) costs one warning; the bridge runs on.
final class QueryService: Sendable {
    /// Where a running server listens and whom it answers: what a reload must restart it for.
    private struct Binding: Equatable {
        var host: String
        var port: Int
        var allow: [IPNetwork]
        var page: Bool
        var actions: [String]
        var actionsAllow: [IPNetwork]
    }

    private let running = Mutex<(server: OSCQueryServer, binding: Binding)?>(nil)
    private let failure = Mutex<String?>(nil)
    private let log: Logger
    /// Where the servers read live values (ACCESS 3, VALUE); nil: every method is write-only.
    private let values: (any OSCQueryValueSource)?

    /// The status page its servers serve to browsers, where the config keeps it on.
    private let page: (any StatusPageSource)?

    package init(log: Logger, values: (any OSCQueryValueSource)? = nil, page: (any StatusPageSource)? = nil) {
        self.log = log
        self.values = values
        self.page = page
    }

    /// Serves the namespace of `config`'s OSC input, or stops (nil, no input, `query: false`).
    /// Returns the port the server listens on.
    @discardableResult
    func apply(_ config: BridgeConfig?) -> UInt16? {
        guard let config, let input = config.oscInput, let port = input.queryPort else {
            running.withLock { $0 = nil }
            failure.withLock { $0 = nil }
            return nil
        }
        let namespace = OSCQueryNamespace(
            outputNames: config.outputs.map(\.name), families: input.families, mappings: input.mappings,
            sysex: input.sysex, inputNames: config.inputs.map(\.name))
        let wildcard = IPAddress(parsing: input.host)?.isUnspecified ?? false
        let hostInfo = OSCQueryHostInfo(
            name: input.serviceName ?? OSCService.defaultName, oscAddress: wildcard ? nil : input.host,
            oscPort: input.port, oscTransport: input.transports.contains(.udp) ? "UDP" : "TCP")
        let binding = Binding(
            host: input.host, port: port, allow: input.allow, page: input.page, actions: input.pageActions,
            actionsAllow: input.actionsAllow)
        let served = page.flatMap { source in
            input.page
                ? OSCQueryServer.Page(
                    source: source, actions: Set(input.pageActions.compactMap(StatusPageAction.init)),
                    actionsAllow: input.actionsAllow) : nil
        }
        return running.withLock { current in
            if let current, current.binding == binding {
                current.server.update(namespace: namespace, hostInfo: hostInfo)
                return current.server.port
            }
            // The old server lets go of its port before the new one binds it.
            current = nil
            do {
                let server = try OSCQueryServer(
                    host: input.host, port: UInt16(port), allow: input.allow, namespace: namespace, hostInfo: hostInfo,
                    values: values, page: served)
                current = (server, binding)
                failure.withLock { $0 = nil }
                log.notice("oscquery: \(server.url) (\(namespace.root.methodCount) OSC methods)")
                if served != nil {
                    let actions =
                        input.pageActions.isEmpty ? "read-only" : "actions " + input.pageActions.joined(separator: ", ")
                    log.notice("status page: \(server.url)/ (\(actions))")
                }
                if !namespace.unlistedMappings.isEmpty {
                    let numbers = namespace.unlistedMappings.map { "\($0 + 1)" }.joined(separator: ", ")
                    log.notice(
                        "oscquery: mapping\(namespace.unlistedMappings.count == 1 ? "" : "s") \(numbers) not listed "
                            + "(an address with * or a capture no field gives a range); they still work")
                }
                return server.port
            } catch {
                log.warning("oscquery: \(error); the namespace is not served")
                failure.withLock { $0 = "\(error)" }
                return nil
            }
        }
    }

    /// The line `status` prints; nil when there is no server and no failure.
    var statusLine: String? {
        if let failure = failure.withLock({ $0 }) { return "oscquery: off: \(failure)" }
        return running.withLock { current in
            guard let server = current?.server else { return nil }
            let counters = server.counters
            let requests = counters.answered.values.reduce(0, +)
            let byStatus = counters.answered.keys.sorted().map { "\($0): \(counters.answered[$0]!)" }
            let page =
                "page: served \(counters.pagesServed), \(counters.pagesWatching) watching"
                + " (\(counters.pagesMonitoring) monitoring), \(counters.actionsDone) actions"
                + ", refused \(counters.actionsRefusedGet) by GET, \(counters.actionsRefusedNotAllowed) not allowed"
                + ", \(counters.actionsRefusedOtherSite) from another site"
            return "oscquery: \(server.url), \(requests) request\(requests == 1 ? "" : "s")"
                + (byStatus.isEmpty ? "" : " (\(byStatus.joined(separator: ", ")))")
                + ", \(counters.connections) connection\(counters.connections == 1 ? "" : "s") (\(counters.open) open)"
                + ", \(counters.closedUnanswered) closed unanswered, \(counters.refusedNotAllowed) refused not allowed"
                + ", \(counters.refusedOverLimit) refused over the limit"
                + "; websocket: \(counters.webSocketsOpen) open of \(counters.webSockets), \(counters.listening) listens"
                + ", \(counters.valuesSent) values and \(counters.pathChangesSent) path changes sent"
                + ", \(counters.framesIgnored) frames ignored, closed: \(counters.closedSlow) not reading"
                + ", \(counters.closedOversized) oversized, \(counters.closedTooManyListens) too many listens"
                + "; " + page
        }
    }

    /// The `oscQuery` member of `status --json`; nil when there is no server and no failure.
    var statusJSON: JSONValue? {
        if let failure = failure.withLock({ $0 }) { return .object(["error": .string(failure)]) }
        return running.withLock { current in
            guard let server = current?.server else { return nil }
            let counters = server.counters
            let webSocket: JSONValue = .object([
                "connections": .number(Double(counters.webSockets)), "open": .number(Double(counters.webSocketsOpen)),
                "listening": .number(Double(counters.listening)), "valuesSent": .number(Double(counters.valuesSent)),
                "pathChangesSent": .number(Double(counters.pathChangesSent)),
                "framesIgnored": .number(Double(counters.framesIgnored)),
                "closedNotReading": .number(Double(counters.closedSlow)),
                "closedOversized": .number(Double(counters.closedOversized)),
                "closedTooManyListens": .number(Double(counters.closedTooManyListens)),
            ])
            let page: JSONValue = .object([
                "served": .number(Double(counters.pagesServed)),
                "watching": .number(Double(counters.pagesWatching)),
                "monitoring": .number(Double(counters.pagesMonitoring)),
                "actionsDone": .number(Double(counters.actionsDone)),
                "refusedGet": .number(Double(counters.actionsRefusedGet)),
                "refusedNotAllowed": .number(Double(counters.actionsRefusedNotAllowed)),
                "refusedOtherSite": .number(Double(counters.actionsRefusedOtherSite)),
            ])
            return .object([
                "url": .string(server.url), "port": .number(Double(server.port)),
                "answered": .object(
                    Dictionary(uniqueKeysWithValues: counters.answered.map { ("\($0.key)", .number(Double($0.value))) })
                ),
                "connections": .number(Double(counters.connections)), "open": .number(Double(counters.open)),
                "closedUnanswered": .number(Double(counters.closedUnanswered)),
                "refusedNotAllowed": .number(Double(counters.refusedNotAllowed)),
                "refusedOverLimit": .number(Double(counters.refusedOverLimit)),
                "webSocket": webSocket,
                "page": page,
            ])
        }
    }
}
