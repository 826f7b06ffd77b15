import Foundation
import PackagePlugin

/// Writes `Version.swift` (`let packageVersion = "..."`) from the package's VERSION file, so
/// `aseqosc --version` and the Debian package take their version from one place.
@main
struct VersionPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let version = context.package.directoryURL.appending(path: "VERSION")
        let output = context.pluginWorkDirectoryURL.appending(path: "Version.swift")
        let script = #"printf '/// The version in the VERSION file.\nlet packageVersion = "%s"\n' "$(tr -d '[:space:]' < "$0")" > "$1""#
        return [
            .buildCommand(
                displayName: "Version.swift from VERSION", executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", script, version.path, output.path], inputFiles: [version], outputFiles: [output])
        ]
    }
}
