import Foundation
import Testing

@testable import FaultlinePredicate

/// The inputs the predicate fuzz target found (`Fuzz/regressions/predicate`): each must parse
/// (or fail to) cleanly, and its canonical form must read back as the same tree and print the
/// same text.
@Suite struct FuzzRegressionTests {
    static let folder: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("Fuzz/regressions/predicate")
    }()

    static let inputs: [String] = (try? FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted()) ?? []

    @Test func theRegressionFolderIsThere() {
        #expect(Self.inputs.count >= 9)
    }

    @Test(arguments: inputs)
    func theCanonicalFormReadsBackAsTheSameTree(name: String) throws {
        let data = try Data(contentsOf: Self.folder.appendingPathComponent(name))
        let format = String(decoding: data, as: UTF8.self)
        guard let predicate = try? FLPredicate(format: format) else { return }
        let canonical = predicate.predicateFormat
        let reparsed = try FLPredicate(format: canonical)
        #expect(reparsed.predicateFormat == canonical, "\(name): \(canonical.debugDescription)")
        #expect(reparsed == predicate, "\(name): \(canonical.debugDescription)")
    }

    @Test func theFindingsPrintAsTheyShould() throws {
        let keyword = try FLPredicate(format: "a.in-b == 1").predicateFormat
        #expect(keyword == "a.#in - b == 1", "\(keyword)")
        #expect(try FLPredicate(format: "a == -1e309").predicateFormat == "a == -1e999")
        #expect(try FLPredicate(format: "a == 1e309").predicateFormat == "a == 1e999")
        #expect(try FLPredicate(format: "a == -0.0").predicateFormat == "a == -0.0")
        #expect(try FLPredicate(format: "\"\u{0}\u{345}\" > 3").predicateFormat == #""\u0000\u0345" > 3"#)
    }
}
