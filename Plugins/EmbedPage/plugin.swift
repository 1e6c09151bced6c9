import Foundation
import PackagePlugin

/// Build-tool plugin: turns the package's `public/` directory (the browser page)
/// into one Swift source, `EmbeddedPage.swift`, compiled into the target that uses
/// the plugin. So `sse-gateway` serves its page from any working directory.
///
/// Every regular, non-hidden file below `public/` is an input: editing the page
/// and building again regenerates the source. Hidden names (starting with `.`)
/// are left out, as the static file server never serves them.
@main
struct EmbedPage: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let publicDirectory = context.package.directoryURL.appendingPathComponent("public")
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("EmbeddedPage.swift")
        let files = Self.pageFiles(below: publicDirectory)
        return [
            .buildCommand(
                displayName: "Embedding public/ (\(files.count) files) into \(target.name)",
                executable: try context.tool(named: "EmbedPageTool").url,
                arguments: [output.path, publicDirectory.path] + files.map(\.path),
                inputFiles: files,
                outputFiles: [output]),
        ]
    }

    /// The regular files below `root`, hidden ones (and hidden directories) left out, sorted.
    static func pageFiles(below root: URL) -> [URL] {
        guard let walker = FileManager.default.enumerator(
            at: root, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
        else { return [] }
        var files: [URL] = []
        for case let url as URL in walker {
            if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                files.append(url)
            }
        }
        return files.sorted { $0.path < $1.path }
    }
}
