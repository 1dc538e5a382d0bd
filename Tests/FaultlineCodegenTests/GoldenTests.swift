import FaultlineCodegen
import FaultlineModel
import FaultlineTestSupport
import Foundation
import Testing

/// The generated classes of every sample model, and of the AllTypes test model, are pinned
/// in `Tests/Fixtures/GeneratedClasses/<Model>/`: reviewed like code, compared exactly.
///
/// After a deliberate change to the generator, re-record and review the diff:
/// `FAULTLINE_RECORD_GOLDEN=1 swift test --filter GoldenTests`.
@Suite struct GoldenTests {
    /// The pinned models: the four samples and the test model of every type and name case.
    static let models: [(name: String, url: URL)] =
        ["Recipes", "Inventory", "Books", "Triage"].map { ($0, GeneratedCode.sampleModel($0)) }
        + [("AllTypes", GeneratedCode.modelRoot.appendingPathComponent("AllTypes.xcdatamodel"))]

    static var recording: Bool { ProcessInfo.processInfo.environment["FAULTLINE_RECORD_GOLDEN"] == "1" }

    static let rerecord =
        "If the change is intended, re-record with FAULTLINE_RECORD_GOLDEN=1 swift test --filter GoldenTests and review the diff of Tests/Fixtures/GeneratedClasses."

    @Test(arguments: models.map(\.name))
    func generatedClassesMatchTheirGoldenFiles(_ name: String) throws {
        let url = try #require(Self.models.first { $0.name == name }?.url)
        let files = try GeneratedCode.files(for: url)
        let folder = GeneratedCode.goldenRoot.appendingPathComponent(name)
        if Self.recording {
            try GeneratedFile.write(files, to: folder, removingStale: true)
            return
        }
        let golden = Set((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        let generated = Set(files.map(\.name))
        #expect(golden == generated, "\(name): golden files \(golden.sorted()), generated \(generated.sorted()). \(Self.rerecord)")
        for file in files where golden.contains(file.name) {
            let expected = try String(contentsOf: folder.appendingPathComponent(file.name), encoding: .utf8)
            if expected != file.contents {
                Issue.record("\(name)/\(file.name) differs from its golden file:\n\(lineDiff(expected: expected, actual: file.contents))\n\(Self.rerecord)")
            }
        }
    }

    @Test func singleFileHoldsTheSameDeclarationsOnce() throws {
        let url = GeneratedCode.sampleModel("Triage")
        let generator = try ClassGenerator(model: try ManagedObjectModel(contentsOf: url), sourceName: url.lastPathComponent)
        let single = try generator.singleFile(named: "Triage+Faultline.swift")
        #expect(single.name == "Triage+Faultline.swift")
        #expect(single.contents.components(separatedBy: "import Faultline\n").count == 2)
        for file in try generator.files() {
            let body = try #require(file.contents.components(separatedBy: "import Foundation\n\n").last)
            #expect(single.contents.contains(body), "\(file.name)")
        }
    }

    @Test func diffShowsTheChangedLines() {
        let diff = lineDiff(expected: "a\nb\nc\nd\ne\nf\ng\nh", actual: "a\nb\nc\nD\ne\nf\ng\nh")
        #expect(diff == "@@ line 2 of the golden file @@\n  b\n  c\n- d\n+ D\n  e\n  f")
    }
}
