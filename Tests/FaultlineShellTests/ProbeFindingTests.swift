import FaultlineTestSupport
import Foundation
import Testing

/// The second probe's findings (24 November): each was a crash, a changed file or a silent
/// loss, and is now an error or the right answer.
@Suite struct ProbeFindingTests {
    static let sqlite3 = URL(fileURLWithPath: "/usr/bin/sqlite3")

    static func model(_ folder: URL, _ name: String, _ entities: String) throws -> URL {
        let model = folder.appendingPathComponent("\(name).xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try Data("<?xml version=\"1.0\"?><model>\(entities)</model>".utf8).write(to: model.appendingPathComponent("contents"))
        return model
    }

    @Test func namesThatAreNotIdentifiersAreRefusedBeforeAnySQL() async throws {
        let folder = try TestSupport.temporaryDirectory("probe")
        let pwned = folder.appendingPathComponent("pwn.db")
        let evil = try Self.model(folder, "Evil", "<entity name=\"A(x); ATTACH '\(pwned.path)' AS p; CREATE TABLE p.owned(x); CREATE TABLE B\"><attribute name=\"a\" optional=\"YES\" attributeType=\"String\"/></entity>")
        let result = try await TestSupport.faultline(["--model", evil.path, "-c", ".model"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("is not a name Core Data accepts"))
        #expect(!FileManager.default.fileExists(atPath: pwned.path))
        let cased = try Self.model(folder, "Cased", "<entity name=\"E\"/><entity name=\"e\"/>")
        let store = folder.appendingPathComponent("cased.sqlite")
        let twin = try await TestSupport.faultline([store.path, "--model", cased.path, "--write", "-c", "count E"])
        #expect(twin.status == 1 && twin.stderr.contains("differ only in case"))
        #expect(!FileManager.default.fileExists(atPath: store.path), "no half-made store is left")
    }

    @Test func decimalsNoDecimalCanHoldAreNeverATrap() async throws {
        let folder = try TestSupport.temporaryDirectory("probe")
        let model = try Self.model(folder, "T", "<entity name=\"T\"><attribute name=\"dec\" optional=\"YES\" attributeType=\"Decimal\"/></entity>")
        let store = folder.appendingPathComponent("t.sqlite")
        let made = try await TestSupport.faultline([store.path, "--model", model.path, "--write", "--sql-debug", "0", "-c", "insert T dec = 1", "-c", "save"])
        #expect(made.status == 0, "\(made.stderr)")
        _ = try await TestSupport.run(Self.sqlite3, [store.path, "UPDATE ZT SET ZDEC = 9e999"])
        let fetched = try await TestSupport.faultline([store.path, "--model", model.path, "--sql-debug", "0", "-c", "fetch T"])
        #expect(fetched.status == 0 && fetched.stdout.contains("| $1 | nil |"), "\(fetched.stdout)\(fetched.stderr)")
        let inserted = try await TestSupport.faultline(["--model", model.path, "--sql-debug", "0", "-c", "insert T dec = 1e400"])
        #expect(inserted.status == 1 && inserted.stderr.contains("a number a Decimal can hold"))
        let compared = try await TestSupport.faultline(["--model", model.path, "--sql-debug", "0", "-c", "insert T dec = 1", "-c", "fetch T where dec > 1e999", "-c", "rollback"])
        #expect(compared.status == 0, "\(compared.stderr)")
    }

    @Test func keyCountersOutOfRangeAreErrorsNotTraps() async throws {
        let store = try ShellHarness.writableCopy(of: "Inventory")
        for (value, message) in [("9223372036854775807", "no 1 more primary keys fit in 64 bits"), ("-5", "Z_PRIMARYKEY.Z_MAX of Location is -5, not a key counter")] {
            _ = try await TestSupport.run(Self.sqlite3, [store.path, "UPDATE Z_PRIMARYKEY SET Z_MAX = \(value) WHERE Z_ENT = 3"])
            let result = try await TestSupport.faultline([store.path, "--write", "--sql-debug", "0", "-c", "insert Location label = \"a\"", "-c", "save"])
            #expect(result.status == 1 && result.stderr.contains(message), "\(value): \(result.stderr)")
        }
    }

    @Test func integerOverflowInMemoryIsNotATrap() async throws {
        let store = TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite").path
        let result = try await TestSupport.faultline([store, "--sql-debug", "0", "-c", "fetch Location limit 1", "-c", "show $1.inventories where modulus:by:(-9223372036854775807 - 1, -1) == 0"])
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test func textWithANulIsKeptWhole() async throws {
        let store = try ShellHarness.writableCopy(of: "Inventory")
        let saved = try await TestSupport.faultline([store.path, "--write", "--sql-debug", "0"], stdin: "insert Asset label = \"x\u{0}y\"\nsave\n")
        #expect(saved.status == 0, "\(saved.stderr)")
        let hex = try await TestSupport.run(Self.sqlite3, [store.path, "SELECT hex(ZLABEL) FROM ZASSET WHERE Z_PK = 6"])
        #expect(hex.stdout == "780079\n")
        let counted = try await TestSupport.faultline([store.path, "--sql-debug", "0", "-c", "count Asset where label == \"Bicycle\\u0000junk\""])
        #expect(counted.stdout == "0\n", "\(counted.stderr)")
    }

    @Test func aHeaderThatSaysWALOnlyInOneByteStillGetsTheReadOnlyPlan() async throws {
        let folder = try TestSupport.temporaryDirectory("probe")
        let store = folder.appendingPathComponent("x.sqlite")
        try FileManager.default.copyItem(at: TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite"), to: store)
        let handle = try FileHandle(forWritingTo: store)
        try handle.seek(toOffset: 18)
        try handle.write(contentsOf: Data([1]))
        try handle.close()
        let before = try TestSupport.snapshot(of: folder)
        _ = try await TestSupport.faultline([store.path, "-c", "count Asset"])
        #expect(try TestSupport.snapshot(of: folder) == before)
    }

    @Test func rawRefusesTransactionControlSoTheNextSaveWorks() async throws {
        let store = try ShellHarness.writableCopy(of: "Inventory")
        let result = try await TestSupport.faultline([store.path, "--write", "--sql-debug", "0", "--keep-going"], stdin: """
            .raw BEGIN
            .raw SAVEPOINT a
            .raw PRAGMA locking_mode = EXCLUSIVE
            insert Location label = "Attic"
            save
            """)
        #expect(result.stderr.components(separatedBy: ".raw does not run transaction control").count == 4, "\(result.stderr)")
        #expect(result.stdout.hasSuffix("saved: 1 inserted, 0 updated, 0 deleted\n"))
    }
}
