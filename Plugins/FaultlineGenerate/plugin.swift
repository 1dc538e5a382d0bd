import Foundation
import PackagePlugin

/// A build-tool plugin: for every Core Data model in a target (`.xcdatamodeld`, or an
/// `.xcdatamodel` not inside one), runs `faultline-generate` at build time into the plugin's
/// work folder, so the target gets a typed `ManagedObject` subclass per entity and the enum
/// listing them (`RecipesModel.classes`) with no generated code in the package. One Swift
/// file per model, `<Model>+Faultline.swift`: a plugin must name its outputs before the
/// model is read. See Documentation/TypedModels.md.
@main
struct FaultlineGenerate: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let tool = try context.tool(named: "faultline-generate")
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("GeneratedSources", isDirectory: true)
        return Self.models(in: target).map { model in
            let stem = model.deletingPathExtension().lastPathComponent
            let file = "\(stem)+Faultline.swift"
            return .buildCommand(
                displayName: "Generating Faultline classes from \(model.lastPathComponent)",
                executable: tool.url,
                arguments: [model.path, "--output", output.path, "--single-file", file],
                inputFiles: [model] + Self.files(in: model),
                outputFiles: [output.appendingPathComponent(file)]
            )
        }
    }

    /// The models among a target's files: SwiftPM lists a model bundle's files (or the
    /// bundle, when it is a resource), so each file's outermost `.xcdatamodeld` or
    /// `.xcdatamodel` folder is a model, once.
    static func models(in target: SourceModuleTarget) -> [URL] {
        var found: [String: URL] = [:]
        for file in target.sourceFiles {
            let components = file.url.standardizedFileURL.pathComponents
            guard let end = components.firstIndex(where: { ["xcdatamodeld", "xcdatamodel"].contains(($0 as NSString).pathExtension.lowercased()) })
            else { continue }
            let url = URL(fileURLWithPath: NSString.path(withComponents: Array(components[...end])))
            found[url.path] = url
        }
        return found.keys.sorted().compactMap { found[$0] }
    }

    /// The files inside a model folder, so that editing the model (its `contents`, its
    /// current version) runs the tool again.
    static func files(in model: URL) -> [URL] {
        guard let walker = FileManager.default.enumerator(at: model, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
        var files: [URL] = []
        for case let url as URL in walker where files.count < 10_000 {
            if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true { files.append(url) }
        }
        return files.sorted { $0.path < $1.path }
    }
}
