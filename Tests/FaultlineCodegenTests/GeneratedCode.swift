import FaultlineCodegen
import FaultlineModel
import FaultlineTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Generated classes in the tests: generating for a sample or a corpus model, and compiling
/// generated code with `swiftc` against the modules this test run was built with.
enum GeneratedCode {
    /// The golden files: `Tests/Fixtures/GeneratedClasses/<Sample>/<File>`.
    static let goldenRoot = TestSupport.packageRoot.appendingPathComponent("Tests/Fixtures/GeneratedClasses")
    /// Test models (`AllTypes.xcdatamodel`, …).
    static let modelRoot = TestSupport.packageRoot.appendingPathComponent("Tests/Fixtures/Models")

    /// The model of a sample, `Samples/<name>/<name>.xcdatamodeld`.
    static func sampleModel(_ name: String) -> URL {
        TestSupport.packageRoot.appendingPathComponent("Samples/\(name)/\(name).xcdatamodeld")
    }

    /// The generated files for a model file.
    static func files(for url: URL, swiftNames: [String: String] = [:]) throws -> [GeneratedFile] {
        let generator = try ClassGenerator(model: try ManagedObjectModel(contentsOf: url), sourceName: url.lastPathComponent, swiftNames: swiftNames)
        return try generator.files()
    }

    // MARK: Compiling

    /// Why compiled-code tests cannot run here, or nil when they can.
    static var compilerUnavailable: String? {
        swiftc == nil ? "skipped: swiftc is not on the PATH" : nil
    }

    static var swiftc: URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("swiftc") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// The object files of the library's modules, as the test binary was linked with them
    /// (its link list names exactly the current ones; a build folder may hold stale ones).
    static func libraryObjects() throws -> [String] {
        let targets = ["Faultline", "FaultlineModel", "FaultlinePredicate", "FaultlineSQL", "CFaultlineIntArray", "CFaultlineReferenceCounts"].map { "/\($0).build/" }
        let products = TestSupport.productsDirectory
        let list = products.appendingPathComponent("FaultlinePackageTests.product/Objects.LinkFileList")
        if let text = try? String(contentsOf: list, encoding: .utf8) {
            let objects = text.split(separator: "\n").map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "\"' ")) }
                .filter { line in targets.contains { line.contains($0) } }
            if !objects.isEmpty { return objects }
        }
        var objects: [String] = []
        for target in targets {
            let folder = products.appendingPathComponent(target.trimmingCharacters(in: CharacterSet(charactersIn: "/")))
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() where name.hasSuffix(".o") {
                objects.append(folder.appendingPathComponent(name).path)
            }
        }
        return objects
    }

    /// `-sanitize=…` when this process runs under a sanitizer (the objects it links need it).
    static var sanitizerFlags: [String] {
        guard let handle = dlopen(nil, RTLD_NOW) else { return [] }
        defer { dlclose(handle) }
        if dlsym(handle, "__asan_init") != nil { return ["-sanitize=address"] }
        if dlsym(handle, "__tsan_init") != nil { return ["-sanitize=thread"] }
        return []
    }

    /// What `swiftc` said.
    struct Compilation {
        var status: Int32
        var output: String
        var seconds: Double
    }

    /// Compiles Swift files in Swift 6 mode with warnings as errors, as one module: into an
    /// executable linked with the library, or (`typecheckOnly`) only type-checked.
    static func compile(_ sources: [URL], module: String, executable: URL?) async throws -> Compilation {
        guard let swiftc else { throw CompilerMissing() }
        let products = TestSupport.productsDirectory
        var cModules = ["CFaultlineSQLite", "CFaultlineZlib"].flatMap {
            ["-Xcc", "-fmodule-map-file=" + TestSupport.packageRoot.appendingPathComponent("Sources/\($0)/module.modulemap").path]
        }
        // A C target's module map is the one SwiftPM writes into the build folder.
        cModules += ["CFaultlineIntArray", "CFaultlineReferenceCounts"].flatMap {
            ["-Xcc", "-fmodule-map-file=" + products.appendingPathComponent("\($0).build/module.modulemap").path]
        }
        var arguments = ["-swift-version", "6", "-warnings-as-errors", "-wmo", "-module-name", module]
        arguments += ["-I", products.appendingPathComponent("Modules").path] + cModules + sanitizerFlags
        arguments += sources.map(\.path)
        if let executable {
            arguments += try libraryObjects() + ["-lsqlite3", "-lz", "-o", executable.path]
        } else {
            arguments.append("-typecheck")
        }
        let start = Date()
        let result = try await TestSupport.run(swiftc, arguments)
        return Compilation(status: result.status, output: result.stdout + result.stderr, seconds: Date().timeIntervalSince(start))
    }

    struct CompilerMissing: Error, CustomStringConvertible {
        var description: String { "swiftc is not on the PATH" }
    }

    // MARK: The round trip

    /// The program that reads every typed property of every object against
    /// `value(forKey:)`, changes the writable ones, saves, and reads them back:
    /// `Tests/Fixtures/GeneratedClasses/RoundTrip.swift`.
    static let roundTripDriver = goldenRoot.appendingPathComponent("RoundTrip.swift")

    /// What a round trip found.
    struct RoundTrip: CustomStringConvertible {
        var classes = 0
        var objects = 0
        var values = 0
        var defaulted = 0
        var changed = 0
        var problems = 0
        var output: String
        var compileSeconds: Double
        var description: String {
            "\(classes) classes, \(objects) objects, \(values) values (\(defaulted) read as defaults), \(changed) changed, \(problems) problems; compiled in \(String(format: "%.1f", compileSeconds)) s\n\(output)"
        }
    }

    /// Generates classes for a model, compiles them with the round-trip program, and runs it
    /// on a store (`model` nil: the model the store caches).
    static func roundTrip(
        model: URL?, store: URL, generatedFrom source: ManagedObjectModel, sourceName: String, swiftNames: [String: String] = [:]
    ) async throws -> RoundTrip {
        let folder = try TestSupport.temporaryDirectory("faultline-codegen")
        let generator = try ClassGenerator(model: source, sourceName: sourceName, swiftNames: swiftNames)
        let files = try generator.files()
        try GeneratedFile.write(files, to: folder)
        // The classes of root entities list their key paths to the program (subclasses inherit it).
        let roots = source.entities.filter { $0.superentityName == nil }.map { ClassGenerator.className(of: $0) }.sorted()
        let listing = """
            import Faultline

            enum GeneratedClasses {
                static var all: [any KeyPathListing.Type] { \(generator.modelTypeName).classes.compactMap { $0 as? any KeyPathListing.Type } }
            }

            """ + roots.map { "extension \($0): KeyPathListing {}\n" }.joined()
        try listing.write(to: folder.appendingPathComponent("GeneratedClasses.swift"), atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(at: roundTripDriver, to: folder.appendingPathComponent("main.swift"))
        let sources =
            files.map { folder.appendingPathComponent($0.name) }
            + ["GeneratedClasses.swift", "main.swift"].map { folder.appendingPathComponent($0) }
        let executable = folder.appendingPathComponent("roundtrip")
        let compiled = try await compile(sources, module: "RoundTrip", executable: executable)
        guard compiled.status == 0 else {
            return RoundTrip(problems: 1, output: "swiftc failed:\n" + compiled.output, compileSeconds: compiled.seconds)
        }
        let run = try await TestSupport.run(executable, [store.path, model?.path ?? "-"])
        var result = RoundTrip(output: run.stdout + run.stderr, compileSeconds: compiled.seconds)
        let summary = run.stdout.split(separator: "\n").last { $0.hasPrefix("classes ") }.map { $0.split(separator: " ").map(String.init) } ?? []
        func count(_ key: String) -> Int { summary.firstIndex(of: key).flatMap { $0 + 1 < summary.count ? Int(summary[$0 + 1]) : nil } ?? -1 }
        result.classes = count("classes")
        result.objects = count("objects")
        result.values = count("values")
        result.defaulted = count("defaulted")
        result.changed = count("changed")
        result.problems = run.status == 0 ? count("problems") : max(1, count("problems"))
        return result
    }

    /// A copy of a file (and its `-wal`/`-shm`) in a new temporary folder.
    static func copy(store: URL) throws -> URL {
        let folder = try TestSupport.temporaryDirectory("faultline-codegen-store")
        let copy = folder.appendingPathComponent(store.lastPathComponent)
        for suffix in ["", "-wal", "-shm"] {
            let source = URL(fileURLWithPath: store.path + suffix)
            guard FileManager.default.fileExists(atPath: source.path) else { continue }
            try FileManager.default.copyItem(at: source, to: URL(fileURLWithPath: copy.path + suffix))
        }
        try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: copy.path)
        return copy
    }
}

/// A short line diff of two texts, for golden-file failures: the changed lines with two
/// lines of context, `-` expected, `+` actual.
func lineDiff(expected: String, actual: String, limit: Int = 60) -> String {
    let a = expected.components(separatedBy: "\n")
    let b = actual.components(separatedBy: "\n")
    // Longest common subsequence, from the end.
    var lcs = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in stride(from: a.count - 1, through: 0, by: -1) {
        for j in stride(from: b.count - 1, through: 0, by: -1) {
            lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : max(lcs[i + 1][j], lcs[i][j + 1])
        }
    }
    var lines: [(mark: Character, text: String, line: Int)] = []
    var i = 0, j = 0
    while i < a.count || j < b.count {
        if i < a.count, j < b.count, a[i] == b[j] {
            lines.append((" ", a[i], i + 1)); i += 1; j += 1
        } else if i < a.count, j == b.count || lcs[i + 1][j] >= lcs[i][j + 1] {
            lines.append(("-", a[i], i + 1)); i += 1
        } else {
            lines.append(("+", b[j], i + 1)); j += 1
        }
    }
    let changed = lines.indices.filter { lines[$0].mark != " " }
    let shown = Set(changed.flatMap { max(0, $0 - 2)...min(lines.count - 1, $0 + 2) })
    var out: [String] = []
    var previous = -2
    for index in shown.sorted() {
        if index != previous + 1 { out.append("@@ line \(lines[index].line) of the golden file @@") }
        out.append("\(lines[index].mark) \(lines[index].text)")
        previous = index
        if out.count >= limit {
            out.append("… (\(changed.count) changed lines in all)")
            break
        }
    }
    return out.joined(separator: "\n")
}
