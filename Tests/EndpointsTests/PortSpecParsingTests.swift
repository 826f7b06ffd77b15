import Endpoints
import Testing

@Suite struct PortSpecParsingTests {
    @Test(arguments: [
        ("20:0", PortSpec.Form.address(PortAddress(client: 20, port: 0))),
        ("0:1", .address(PortAddress(client: 0, port: 1))),
        ("255:255", .address(PortAddress(client: 255, port: 255))),
        ("007:010", .address(PortAddress(client: 7, port: 10))),
        ("20", .client(20)),
        ("0", .client(0)),
        ("KeyStep Pro", .name("KeyStep Pro")),
        ("Client Name:Port Name", .name("Client Name:Port Name")),
        ("Client Name:1", .name("Client Name:1")),
        ("Foo:Bar", .name("Foo:Bar")),
        ("Midi Through:Midi Through Port-0", .name("Midi Through:Midi Through Port-0")),
        ("20:", .name("20:")),
        (":0", .name(":0")),
        ("20:0:1", .name("20:0:1")),
        ("+20", .name("+20")),
        (" 20", .name(" 20")),
        ("**", .name("**")),
        ("KeyStep.*", .name("KeyStep.*")),
        ("/KeyStep.*/", .pattern("KeyStep.*")),
        ("/a/b/", .pattern("a/b")),
        ("/(?i)keystep/", .pattern("(?i)keystep")),
        ("*", .allHardware),
    ])
    func validTextParsesToItsForm(text: String, form: PortSpec.Form) throws {
        #expect(try PortSpec(parsing: text).form == form)
    }

    @Test(arguments: ["20:0", "007:010", "KeyStep Pro:1", "/KeyStep.*/", "*"])
    func descriptionGivesBackTheUsersText(text: String) throws {
        #expect(try PortSpec(parsing: text).description == text)
    }

    @Test(arguments: [
        ("", "empty port spec"),
        ("   ", "empty port spec"),
        ("256", "'256': 256 is not a client or port number (0-255)"),
        ("20:300", "'20:300': 300 is not a client or port number (0-255)"),
        ("99999999999999999999", "'99999999999999999999': 99999999999999999999 is not a client or port number (0-255)"),
        ("/", "'/' starts a regular expression but does not end with '/'"),
        ("/KeyStep", "'/KeyStep' starts a regular expression but does not end with '/'"),
        ("//", "'//' is an empty regular expression"),
        ("/[/", "'/[/' is not a valid regular expression: expected custom character class members"),
        ("/(KeyStep/", "'/(KeyStep/' is not a valid regular expression: expected ')'"),
        ("/*a/", "'/*a/' is not a valid regular expression: quantifier '*' must appear after expression"),
    ])
    func invalidTextIsRejectedWithWhatIsWrongAndTheAcceptedForms(text: String, problem: String) {
        #expect(throws: PortSpecParseError.self) { try PortSpec(parsing: text) }
        do {
            _ = try PortSpec(parsing: text)
        } catch {
            #expect(error.description == problem + "; " + PortSpecParseError.acceptedForms)
        }
    }

    @Test func acceptedFormsListsEveryForm() {
        #expect(
            PortSpecParseError.acceptedForms
                == #"a port is 20:0 (client:port), 20 (a client number), "Client Name", "Client Name:Port Name", "#
                + #""Client Name:1" (a port number), /regex/ (matched against "client:port" names) or * (every hardware port)"#
        )
    }

    @Test func specsWithTheSameTextAreEqual() throws {
        #expect(try PortSpec(parsing: "/KeyStep.*/") == PortSpec(parsing: "/KeyStep.*/"))
        #expect(try PortSpec(parsing: "20:0") != PortSpec(parsing: "020:0"))
    }
}
