import JSON

/// What the OSC server behind an OSCQuery server is, for `?HOST_INFO`.
package struct OSCQueryHostInfo: Sendable, Equatable {
    /// The name people see (the DNS-SD instance name).
    var name: String
    /// The OSC input's numeric address; nil when it listens on every address, so a client
    /// uses the one it reached the HTTP server at.
    var oscAddress: String?
    var oscPort: Int
    /// `"UDP"` or `"TCP"`: the proposal names one, so UDP when the input takes both.
    var oscTransport: String

    /// Creates the host information.
    package init(name: String, oscAddress: String?, oscPort: Int, oscTransport: String) {
        self.name = name
        self.oscAddress = oscAddress
        self.oscPort = oscPort
        self.oscTransport = oscTransport
    }

    /// The optional attributes and commands a server gives, as HOST_INFO's EXTENSIONS lists
    /// them: every method's ACCESS, RANGE and DESCRIPTION; VALUE when `values` (the server has a
    /// value source); the WebSocket commands (LISTEN, IGNORE, PATH_CHANGED, PATH_REMOVED,
    /// PATH_ADDED) when `webSocket`. Everything else false.
    package static func extensions(values: Bool, webSocket: Bool) -> [String: Bool] {
        [
            "ACCESS": true, "RANGE": true, "DESCRIPTION": true, "VALUE": values, "TAGS": false, "EXTENDED_TYPE": false,
            "UNIT": false, "CRITICAL": false, "CLIPMODE": false, "OVERLOADS": false, "HTML": false,
            "LISTEN": webSocket, "IGNORE": webSocket, "PATH_CHANGED": webSocket, "PATH_REMOVED": webSocket,
            "PATH_ADDED": webSocket, "PATH_RENAMED": false,
        ]
    }

    /// The JSON object `?HOST_INFO` answers, for a server with a value source (`values`) and a
    /// WebSocket side (`webSocket`) or without.
    func json(values: Bool = false, webSocket: Bool = false) -> JSONValue {
        var fields: [String: JSONValue] = [
            "NAME": .string(name), "OSC_PORT": .number(Double(oscPort)), "OSC_TRANSPORT": .string(oscTransport),
            "EXTENSIONS": .object(Self.extensions(values: values, webSocket: webSocket).mapValues { .bool($0) }),
        ]
        if let oscAddress { fields["OSC_IP"] = .string(oscAddress) }
        return .object(fields)
    }
}

/// An HTTP answer to an OSCQuery request: the status and, for 200, the JSON.
package struct OSCQueryAnswer: Sendable, Equatable {
    /// 200, 204, 400, 404 or 405.
    package var status: Int
    /// JSON for 200, a sentence for an error, empty for 204.
    package var body: String

    /// Creates an answer.
    package init(status: Int, body: String) {
        self.status = status
        self.body = body
    }

    /// Whether the body is JSON (`application/json`) rather than text.
    package var isJSON: Bool { status == 200 }
}

extension OSCQueryNamespace {
    /// The attributes a query may name (`?TYPE`), beside HOST_INFO and VALUE.
    package static let queryableAttributes: Set<String> = [
        "FULL_PATH", "CONTENTS", "TYPE", "ACCESS", "RANGE", "DESCRIPTION",
    ]

    /// Answers a GET of `path` (the URL's path, percent-decoded) with the query keys
    /// `attributes` (`?TYPE` gives `["TYPE"]`): the node with everything below it (VALUE
    /// included unless `withValues` is false); one of its attributes; HOST_INFO (whatever the
    /// path); 404 for a path with no node; for VALUE, the value `values` has, `{}` for a
    /// readable method with none yet, 204 for a node that is not readable; 204 for an
    /// attribute the node lacks (TYPE of a container); 400 for an attribute this server does
    /// not know or give, or more than one. `webSocket` says whether HOST_INFO lists the
    /// WebSocket commands.
    package func answer(
        path: String, attributes: [String], hostInfo: OSCQueryHostInfo, values: (any OSCQueryValueSource)? = nil,
        webSocket: Bool = false, withValues: Bool = true
    ) -> OSCQueryAnswer {
        guard attributes.count <= 1 else {
            return OSCQueryAnswer(status: 400, body: "one attribute per query, e.g. ?TYPE\n")
        }
        if attributes.first == "HOST_INFO" {
            return OSCQueryAnswer(
                status: 200, body: JSONWriter.text(hostInfo.json(values: values != nil, webSocket: webSocket)))
        }
        guard let node = root.node(at: path.split(separator: "/")) else {
            return OSCQueryAnswer(status: 404, body: "no OSC method or container at \(path)\n")
        }
        guard let attribute = attributes.first else {
            return OSCQueryAnswer(
                status: 200,
                body: JSONWriter.text(.object(node.attributes(values: values, withValues: withValues))))
        }
        if attribute == "VALUE" {
            guard node.access(values: values) == 3, let values else { return OSCQueryAnswer(status: 204, body: "") }
            guard let value = values.value(at: node.fullPath) else { return OSCQueryAnswer(status: 200, body: "{}") }
            return OSCQueryAnswer(status: 200, body: JSONWriter.text(.object(["VALUE": OSCQueryNode.json(value)])))
        }
        guard Self.queryableAttributes.contains(attribute) else {
            let known = (["HOST_INFO"] + Self.queryableAttributes.sorted()).joined(separator: ", ")
            return OSCQueryAnswer(
                status: 400, body: "unknown or unsupported attribute '\(attribute)'; known: \(known)\n")
        }
        guard let value = node.attributes(values: values, withValues: false)[attribute] else {
            return OSCQueryAnswer(status: 204, body: "")
        }
        return OSCQueryAnswer(status: 200, body: JSONWriter.text(.object([attribute: value])))
    }
}
