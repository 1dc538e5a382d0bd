import FaultlineCodegen
import FaultlineModel
import Foundation

// `faultline-generate MODEL --output DIR [--single-file NAME] [--model-type NAME] [--rename …]`: the
// FaultlineGenerate build-tool plugin's tool. It is `faultline generate` without the shell,
// the store and ArgumentParser, so that a package using the plugin builds little more than
// the model layer for it.

let usage = "usage: faultline-generate MODEL --output DIR [--single-file NAME.swift] [--model-type NAME] [--rename ENTITY.PROPERTY=NAME]…"

/// Prints `MODEL: error: …` (the form build logs and editors show as the file's error) and
/// exits with status 1.
func fail(_ message: String, file: String? = nil) -> Never {
    FileHandle.standardError.write(Data(((file.map { $0 + ": " } ?? "") + "error: " + message + "\n").utf8))
    exit(1)
}

var model: String?
var output: String?
var singleFile: String?
var modelType: String?
var renames: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    func value() -> String {
        guard let next = arguments.popFirst() else { fail("\(argument) needs a value; \(usage)") }
        return next
    }
    switch argument {
    case "--output", "-o": output = value()
    case "--single-file": singleFile = value()
    case "--model-type": modelType = value()
    case "--rename":
        let parts = value().split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, parts[0].contains("."), !parts[1].isEmpty else { fail("--rename: write ENTITY.PROPERTY=NAME") }
        renames[parts[0]] = parts[1]
    case "--help", "-h":
        print(usage)
        exit(0)
    default:
        guard !argument.hasPrefix("-"), model == nil else { fail("unexpected argument \(argument); \(usage)") }
        model = argument
    }
}
guard let model, let output else { fail(usage) }

do {
    let url = URL(fileURLWithPath: model)
    let generator = try ClassGenerator(
        model: try ManagedObjectModel(contentsOf: url), sourceName: url.lastPathComponent, modelTypeName: modelType, swiftNames: renames)
    let files = try singleFile.map { [try generator.singleFile(named: $0)] } ?? generator.files()
    try GeneratedFile.write(files, to: URL(fileURLWithPath: output), removingStale: singleFile == nil)
} catch {
    fail("\(error)", file: model)
}
