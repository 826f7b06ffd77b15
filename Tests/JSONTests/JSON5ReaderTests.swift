import Foundation
import JSON
import Testing

@Suite struct JSON5ReaderTests {
    @Test func json5ExtensionsAreRead() throws {
        let text = """
            // a comment
            { unquoted: 'single', "quoted": "double", /* block */ hex: 0x1F, plus: +1, lead: .5,
              trail: 5., exp: 1.5e3, inf: -Infinity, list: [1, 2, 3,], nested: { a: null, b: true, },
              escapes: 'it\\'s \\x41\\u00e9\\n', line: 'one \\
            two', $dollar_1: false, }
            """
        let value = try JSON5Reader.parse(text)
        guard case .object(let members) = value else { Issue.record("not an object"); return }
        #expect(members["unquoted"] == .string("single"))
        #expect(members["quoted"] == .string("double"))
        #expect(members["hex"] == .number(31))
        #expect(members["plus"] == .number(1))
        #expect(members["lead"] == .number(0.5))
        #expect(members["trail"] == .number(5))
        #expect(members["exp"] == .number(1500))
        #expect(members["inf"] == .number(-.infinity))
        #expect(members["list"] == .array([.number(1), .number(2), .number(3)]))
        #expect(members["nested"] == .object(["a": .null, "b": .bool(true)]))
        #expect(members["escapes"] == .string("it's Aé\n"))
        #expect(members["line"] == .string("one two"))
        #expect(members["$dollar_1"] == .bool(false))
    }

    @Test func surrogatePairsBecomeOneScalar() throws {
        #expect(try JSON5Reader.parse(#""\ud83c\udfb9""#) == .string("🎹"))
        #expect(try JSON5Reader.parse(#""\ud83c""#) == .string("\u{FFFD}"))
    }

    @Test(arguments: [
        ("{ a: 1 b: 2 }", 1, 8, "expected ',' or '}' in an object"),
        ("[1, 2", 1, 6, "expected ',' or ']' in an array"),
        ("{\n  a: 'x\n}", 2, 8, "a string is not closed before the end of the line"),
        ("", 1, 1, "the text ends where a value should be"),
        ("01", 1, 3, "a number may not start with 0 (write 0x for hexadecimal)"),
        ("{ a: 1 } x", 1, 10, "unexpected text after the value"),
        ("/* open", 1, 1, "a /* comment is not closed"),
        ("truex", 1, 1, "expected a value (object, array, string, number, true, false or null)"),
        ("{ 'é': 1, : 2 }", 1, 11, "expected a key (a name or a quoted string)"),
    ])
    func mistakesNameTheirPlace(text: String, line: Int, column: Int, reason: String) {
        #expect(throws: JSONSyntaxError(line: line, column: column, reason: reason)) { try JSON5Reader.parse(text) }
    }

    @Test func nestingIsBounded() throws {
        let deep = String(repeating: "[", count: 100_000)
        #expect(throws: JSONSyntaxError.self) { try JSON5Reader.parse(deep) }
        let fine = String(repeating: "[", count: 256) + String(repeating: "]", count: 256)
        #expect(throws: Never.self) { try JSON5Reader.parse(fine) }
    }

    /// Foundation's JSON5 reader is the reference: every shipped config reads the same.
    @Test func shippedConfigsReadAsFoundationReadsThem() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let examples = repository.appendingPathComponent("Config/examples")
        let files =
            [repository.appendingPathComponent("Config/aseqosc.json5")]
            + (try FileManager.default.contentsOfDirectory(atPath: examples.path)).filter { $0.hasSuffix(".json5") }
            .map { examples.appendingPathComponent($0) }
        #expect(files.count >= 5)
        for file in files {
            let data = try Data(contentsOf: file)
            let ours = try JSON5Reader.parse(Array(data))
            let decoder = JSONDecoder()
            decoder.allowsJSON5 = true
            let reference = try decoder.decode(Reference.self, from: data).value
            #expect(ours == reference, "\(file.lastPathComponent)")
        }
    }

    /// A value as Foundation decodes it, for comparison.
    struct Reference: Decodable {
        var value: JSONValue

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            if let object = try? decoder.container(keyedBy: Key.self) {
                var members: [String: JSONValue] = [:]
                for key in object.allKeys { members[key.stringValue] = try object.decode(Reference.self, forKey: key).value }
                value = .object(members)
            } else if var array = try? decoder.unkeyedContainer() {
                var elements: [JSONValue] = []
                while !array.isAtEnd { elements.append(try array.decode(Reference.self).value) }
                value = .array(elements)
            } else {
                let single = try decoder.singleValueContainer()
                if single.decodeNil() {
                    value = .null
                } else if let bool = try? single.decode(Bool.self) {
                    value = .bool(bool)
                } else if let number = try? single.decode(Double.self) {
                    value = .number(number)
                } else {
                    value = .string(try single.decode(String.self))
                }
            }
        }
    }
}

@Suite struct JSONWriterTests {
    struct Sample: Codable, Equatable {
        struct Inner: Codable, Equatable {
            var name: String
            var counts: [String: Int]
        }
        var version: String
        var uptime: Double
        var flag: Bool
        var missing: Int?
        var present: Int?
        var list: [Inner]
        var big: UInt64
        var text: String
    }

    static let sample = Sample(
        version: "0.2.0", uptime: 12.5, flag: true, missing: nil, present: 7,
        list: [.init(name: "a", counts: ["x": 1, "y": 2]), .init(name: "b", counts: [:])], big: 1 << 40,
        text: "quote \" backslash \\ newline \n tab \t bell \u{07} é 🎹 /slash")

    @Test func encodedValuesDecodeWithFoundation() throws {
        for pretty in [false, true] {
            let text = JSONWriter.text(try JSONValueEncoder.encode(Self.sample), pretty: pretty)
            let decoded = try JSONDecoder().decode(Sample.self, from: Data(text.utf8))
            #expect(decoded == Self.sample)
            #expect(!text.contains("missing"))
        }
    }

    @Test func outputIsStableAndCompact() throws {
        let value = JSONValue.object(["b": .array([.number(1), .number(0.25), .null]), "a": .string("x")])
        #expect(JSONWriter.text(value) == #"{"a":"x","b":[1,0.25,null]}"#)
        #expect(JSONWriter.text(.number(.nan)) == "null")
        #expect(JSONWriter.text(.object([:]), pretty: true) == "{}")
        #expect(JSONWriter.text(value, pretty: true) == "{\n  \"a\": \"x\",\n  \"b\": [\n    1,\n    0.25,\n    null\n  ]\n}")
    }

    @Test func writtenTextReadsBack() throws {
        let value = try JSONValueEncoder.encode(Self.sample)
        #expect(try JSON5Reader.parse(JSONWriter.text(value)) == value)
    }
}
