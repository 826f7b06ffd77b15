import Config
import Foundation
import Testing

/// Inputs the fuzzers (Fuzz/run) crashed on, kept so the fixes stay; each is also in the
/// target's seed corpus under Fuzz/corpus/.
@Suite struct FuzzRegressionTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func message(_ bytes: [UInt8]) -> String? {
        do {
            _ = try ConfigParser.parse(Data(bytes))
            return nil
        } catch {
            return error.description
        }
    }

    /// Foundation's JSON5 reader traps on an unquoted key with three or more invalid UTF-8
    /// bytes; the config parser refuses non-UTF-8 text before it gets there (a SIGHUP with
    /// such a file used to take the daemon down).
    @Test func unquotedKeyWithInvalidUTF8IsRefusedNotATrap() {
        let bytes = Array("{ a: 1,\n  b".utf8) + [0xFF, 0xFF, 0xFF] + Array(": 2 }".utf8)
        #expect(Self.message(bytes) == "not UTF-8 text: an invalid byte at line 2, column 4")
    }

    @Test func fuzzerFoundConfigIsRefused() throws {
        let file = Self.repository.appendingPathComponent(
            "Fuzz/corpus/config-parser/crash-invalid-utf8-unquoted-key.json5")
        let bytes = try [UInt8](Data(contentsOf: file))
        #expect(Self.message(bytes) == "not UTF-8 text: an invalid byte at line 1, column 107")
    }

    @Test(arguments: [
        ([0xC3, 0x28] as [UInt8], "line 1, column 3"),  // a lead byte without its continuation
        ([0xED, 0xA0, 0x80], "line 1, column 3"),  // a UTF-16 surrogate
        ([0xC0, 0xAF], "line 1, column 3"),  // an overlong encoding
        ([0x0A, 0x0A, 0xFE], "line 3, column 1"),
    ])
    func invalidUTF8AnywhereIsRefusedWithItsPlace(bad: [UInt8], place: String) {
        let bytes = Array("{ ".utf8) + bad + Array(" }".utf8)
        #expect(Self.message(bytes) == "not UTF-8 text: an invalid byte at \(place)")
    }

    @Test func validUTF8KeysAndStringsStillParse() throws {
        let text = #"{ client: "Synthé ♪", inputs: [{ name: "clé" }] }"#
        let config = try ConfigParser.parse(Data(text.utf8))
        #expect(config.clientName == "Synthé ♪")
        #expect(config.inputs.map(\.name) == ["clé"])
    }
}
