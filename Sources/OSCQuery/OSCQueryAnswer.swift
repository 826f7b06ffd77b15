import JSON

/// What the OSC server behind an OSCQuery server is, for `?HOST_INFO`.
public struct OSCQueryHostInfo: Sendable, Equatable {
    /// The name people see (the DNS-SD instance name).
    public var name: String
    /// The OSC input's numeric address; nil when it listens on every address, so a client
    /// uses the one it reached the HTTP server at.
    public var oscAddress: String?
    public var oscPort: Int
    /// `"UDP"` or `"TCP"`: the proposal names one, so UDP when the input takes both.
    public var oscTransport: String

    /// Creates the host information.
    public init(name: String, oscAddress: String?, oscPort: Int, oscTransport: String) {
        self.name = name
        self.oscAddress = oscAddress
        self.oscPort = oscPort
        self.oscTransport = oscTransport
    }

    /// The optional attributes this server gives, as HOST_INFO's EXTENSIONS lists them: every
    /// method's ACCESS, RANGE and DESCRIPTION; no VALUE (nothing the input takes can be read
    /// back) and no WebSocket (LISTEN, PATH_CHANGED).
    public static let extensions: [String: Bool] = [
        "ACCESS": true, "RANGE": true, "DESCRIPTION": true, "VALUE": false, "TAGS": false, "EXTENDED_TYPE": false,
        "UNIT": false, "CRITICAL": false, "CLIPMODE": false, "OVERLOADS": false, "LISTEN": false,
        "PATH_CHANGED": false,
    ]

    /// The JSON object `?HOST_INFO` answers.
    public var json: JSONValue {
        var fields: [String: JSONValue] = [
            "NAME": .string(name), "OSC_PORT": .number(Double(oscPort)), "OSC_TRANSPORT": .string(oscTransport),
            "EXTENSIONS": .object(Self.extensions.mapValues { .bool($0) }),
        ]
        if let oscAddress { fields["OSC_IP"] = .string(oscAddress) }
        return .object(fields)
    }
}

/// An HTTP answer to an OSCQuery request: the status and, for 200, the JSON.
public struct OSCQueryAnswer: Sendable, Equatable {
    /// 200, 204, 400, 404 or 405.
    public var status: Int
    /// JSON for 200, a sentence for an error, empty for 204.
    public var body: String

    /// Creates an answer.
    public init(status: Int, body: String) {
        self.status = status
        self.body = body
    }

    /// Whether the body is JSON (`application/json`) rather than text.
    public var isJSON: Bool { status == 200 }
}

extension OSCQueryNamespace {
    /// The attributes a query may name (`?TYPE`), beside HOST_INFO and VALUE.
    public static let queryableAttributes: Set<String> = [
        "FULL_PATH", "CONTENTS", "TYPE", "ACCESS", "RANGE", "DESCRIPTION",
    ]

    /// Answers a GET of `path` (the URL's path, percent-decoded) with the query keys
    /// `attributes` (`?TYPE` gives `["TYPE"]`): the node with everything below it; one of its
    /// attributes; HOST_INFO (whatever the path); 404 for a path with no node; 204 for VALUE,
    /// which no method here has, or an attribute the node lacks (TYPE of a container); 400 for
    /// an attribute this server does not know or give, or more than one.
    public func answer(path: String, attributes: [String], hostInfo: OSCQueryHostInfo) -> OSCQueryAnswer {
        guard attributes.count <= 1 else {
            return OSCQueryAnswer(status: 400, body: "one attribute per query, e.g. ?TYPE\n")
        }
        if attributes.first == "HOST_INFO" {
            return OSCQueryAnswer(status: 200, body: JSONWriter.text(hostInfo.json))
        }
        guard let node = root.node(at: path.split(separator: "/")) else {
            return OSCQueryAnswer(status: 404, body: "no OSC method or container at \(path)\n")
        }
        guard let attribute = attributes.first else {
            return OSCQueryAnswer(status: 200, body: JSONWriter.text(.object(node.attributes())))
        }
        if attribute == "VALUE" { return OSCQueryAnswer(status: 204, body: "") }
        guard Self.queryableAttributes.contains(attribute) else {
            let known = (["HOST_INFO"] + Self.queryableAttributes.sorted()).joined(separator: ", ")
            return OSCQueryAnswer(
                status: 400, body: "unknown or unsupported attribute '\(attribute)'; known: \(known)\n")
        }
        guard let value = node.attributes()[attribute] else { return OSCQueryAnswer(status: 204, body: "") }
        return OSCQueryAnswer(status: 200, body: JSONWriter.text(.object([attribute: value])))
    }
}
