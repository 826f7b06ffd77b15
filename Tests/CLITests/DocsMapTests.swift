import Foundation
import XCTest

/// The docs that map the code stay true to the tree: every module in Sources appears in the
/// README's layout and in ARCHITECTURE.md's module table, every file ARCHITECTURE.md names
/// exists, and no build product is committed.
final class DocsMapTests: XCTestCase {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    func text(_ path: String) throws -> String {
        try String(contentsOf: Self.repository.appendingPathComponent(path), encoding: .utf8)
    }

    var modules: [String] {
        get throws {
            try FileManager.default.contentsOfDirectory(atPath: Self.repository.appendingPathComponent("Sources").path)
                .filter { !$0.hasPrefix(".") }.sorted()
        }
    }

    /// The modules each `    Sources/A, B   what they are` line of README's layout names.
    func readmeLayoutModules() throws -> [String] {
        let readme = try text("README.md")
        let start = try XCTUnwrap(readme.range(of: "\n## Layout\n")).upperBound
        let section = readme[start...].components(separatedBy: "\n## ")[0]
        return section.split(separator: "\n").filter { $0.hasPrefix("    Sources/") }.flatMap { line in
            // "    Sources/CALSA, CLiblo   module maps..." -> ["CALSA", "CLiblo"]
            let names = line.dropFirst("    Sources/".count).components(separatedBy: "  ")[0]
            return names.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    func testReadmeLayoutListsEveryModuleAndNoOther() throws {
        let listed = try readmeLayoutModules()
        let modules = try modules
        for module in modules {
            XCTAssertTrue(listed.contains(module), "README's layout does not list Sources/\(module)")
        }
        for module in listed {
            XCTAssertTrue(modules.contains(module), "README's layout lists Sources/\(module), which does not exist")
        }
    }

    func testArchitectureNamesEveryModuleAndOnlyFilesThatExist() throws {
        let architecture = try text("docs/ARCHITECTURE.md")
        for module in try modules {
            XCTAssertTrue(architecture.contains("`\(module)`"), "ARCHITECTURE.md does not name the module \(module)")
        }
        // Every `Sources/...swift` path it names exists.
        let pattern = try NSRegularExpression(pattern: "Sources/[A-Za-z0-9_+/]+\\.(swift|c|h)")
        let range = NSRange(architecture.startIndex..., in: architecture)
        var named = 0
        for match in pattern.matches(in: architecture, range: range) {
            let path = String(architecture[Range(match.range, in: architecture)!])
            named += 1
            XCTAssertTrue(
                FileManager.default.fileExists(atPath: Self.repository.appendingPathComponent(path).path),
                "ARCHITECTURE.md names \(path), which does not exist")
        }
        XCTAssertGreaterThan(named, 20, "ARCHITECTURE.md's question -> file index names the files")
    }

    func testNoBuildProductIsCommitted() throws {
        let git = Process()
        git.executableURL = URL(fileURLWithPath: "/usr/bin/git")
        git.arguments = ["-C", Self.repository.path, "ls-files"]
        let pipe = Pipe()
        git.standardOutput = pipe
        git.standardError = FileHandle.nullDevice
        do { try git.run() } catch { throw XCTSkip("no git: \(error)") }
        let listed = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        git.waitUntilExit()
        guard git.terminationStatus == 0 else { throw XCTSkip("not a git checkout") }
        for file in listed.split(separator: "\n") {
            XCTAssertFalse(
                file.contains("__pycache__/") || file.hasSuffix(".pyc") || file.hasPrefix(".build/")
                    || file.hasSuffix(".o"),
                "a build product is committed: \(file)")
        }
    }
}
