import FaultlineTestSupport
import Foundation
import Testing

/// The shell on real stores written by Apple's Core Data (copies of the shared corpus).
@Suite struct CorpusShellTests {
    /// Copies a corpus store folder into a temporary folder; the originals are never opened.
    func copyStores(_ folder: String) throws -> URL {
        let corpus = try Corpus.required()
        let target = try TestSupport.temporaryDirectory("corpus-copy")
        let source = corpus.appendingPathComponent("stores/\(folder)")
        for name in try FileManager.default.contentsOfDirectory(atPath: source.path) {
            try FileManager.default.copyItem(at: source.appendingPathComponent(name), to: target.appendingPathComponent(name))
        }
        return target
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func aStoreWithoutAModelFileOpensWithItsCachedModelAndStaysByteIdentical() async throws {
        let folder = try copyStores("photoanalysis-14.6.0")
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try TestSupport.snapshot(of: folder)
        let store = folder.appendingPathComponent("CLSPublicEventCache.sqlite").path
        let result = try await TestSupport.faultline([store, "-c", "count PublicEvent", "-c", "fetch QueryLocation limit 1 show latitude", "-c", "$1.publicEvents.name"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("1\n"))
        #expect(result.stdout.contains("| Matilda The Musical High Tea |\n"))
        #expect(result.stderr.contains("CoreData: sql: SELECT 0, t0.Z_PK FROM Z_1QUERYLOCATIONS t1 JOIN ZPUBLICEVENT t0 ON t0.Z_PK = t1.Z_1PUBLICEVENTS WHERE t1.Z_4QUERYLOCATIONS = ?\n"))
        #expect(try TestSupport.snapshot(of: folder) == before)
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func photosValuesAreValuesInEveryModeAndAWideEntityFits() async throws {
        let folder = try copyStores("photos-10.15.1")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Photos.sqlite").path
        // Asset has over ninety attributes: at 100 columns the table shows what fits and names the rest.
        let table = try await TestSupport.faultline([store, "--sql-debug", "0", "-c", ".width 100", "-c", "fetch Asset limit 3",
            "-c", "fetch Moment sort by startDate limit 2 show title, assets.@count, assets.@max.dateCreated"])
        #expect(table.status == 0, "\(table.stderr)")
        let lines = table.stdout.components(separatedBy: "\n")
        #expect(lines.prefix(7).allSatisfy { $0.count <= 100 }, "\(table.stdout)")
        #expect(lines[7].hasPrefix("3 rows; ") && lines[7].contains(" more columns not shown (") && lines[7].contains(" others): pick columns with show KEY"), "\(lines[7])")
        #expect(table.stdout.contains("| assets.@count | assets.@max.dateCreated"), "\(table.stdout)")
        // JSON: Binary attributes as base64, to-ones as object URIs, no Swift spelling.
        let json = try await TestSupport.faultline([store, "--sql-debug", "0", "-c", ".mode json", "-c", "fetch AdditionalAssetAttributes limit 5"])
        #expect(json.status == 0, "\(json.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(rows.count == 5)
        #expect(rows.contains { ($0["distanceIdentity"] as? String).flatMap { Data(base64Encoded: $0) } != nil })
        #expect(rows.allSatisfy { ($0["asset"] as? String)?.hasPrefix("x-coredata://") == true })
        for text in [table.stdout, json.stdout] {
            #expect(!text.contains("Optional(") && !text.contains("<Asset") && !text.contains("bytes:"))
        }
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func theSchemaOfAPhotosStoreShowsItsTriggersRTreeAndHistory() async throws {
        let folder = try copyStores("photos-16.0.0-beta")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await TestSupport.faultline(["schema", folder.appendingPathComponent("Photos.sqlite").path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\n  trigger ZT_ZPERSON_ZFACECOUNT_ZDETECTEDFACE_INSERT_INCREMENT\n"))
        #expect(result.stdout.contains("\n  trigger Z_RT_Asset_boundedByRect_INSERT\n"))
        #expect(result.stdout.contains("\nR-tree Z_RT_Asset_boundedByRect: CREATE VIRTUAL TABLE Z_RT_Asset_boundedByRect USING RTREE (Z_PK INTEGER PRIMARY KEY, "))
        #expect(result.stdout.contains("\npersistent history: ATRANSACTION (158 transactions), ACHANGE (949 changes), ATRANSACTIONSTRING\n"))

        let history = try await TestSupport.faultline([folder.appendingPathComponent("Photos.sqlite").path, "-c", ".history 1"])
        #expect(history.status == 0, "\(history.stderr)")
        #expect(history.stdout.contains(
            "| 158         | 2025-06-12T03:46:25Z | author [0,1,0], context Album-countCoalescer (fs=16777232/file=282558) .Generic BG, bundle com.apple.photolibraryd, process photolibraryd | update | Album  | p51    | bits 3800020000: probably cachedPhotosCount, cachedVideosCount, cloudDeleteState, keyAssets |                   |"))
        #expect(history.stdout.hasSuffix("1 change\n"))
        #expect(history.stderr.contains("faultline: note: which property each bit of an update stands for is not documented by Apple"))
        // .mode and the filters apply; a bit past the model's properties is said plainly.
        let json = try await TestSupport.faultline([folder.appendingPathComponent("Photos.sqlite").path, "-c", ".mode json", "-c", ".history 2 Album"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["transaction"] as? Int } == [157, 158])
        #expect((rows.first?["updated"] as? String)?.hasSuffix("bit 39 (no property of this model)") == true)
        let uuid = try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [folder.appendingPathComponent("Photos.sqlite").path, "SELECT Z_UUID FROM Z_METADATA"])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let byObject = try await TestSupport.faultline([folder.appendingPathComponent("Photos.sqlite").path, "-c", ".mode csv", "-c", ".history 2 x-coredata://\(uuid)/Album/p51"])
        #expect(byObject.stdout.split(whereSeparator: \.isNewline).count == 3, "\(byObject.stdout)\(byObject.stderr)")  // a header and two changes (CRLF)
        let none = try await TestSupport.faultline([folder.appendingPathComponent("Photos.sqlite").path, "-c", ".history 1 Asset"])
        #expect(none.stdout == "No change in the last transaction matches.\n")
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func modelHashesOfAStoreArePrintedOnePerEntity() async throws {
        let folder = try copyStores("photoanalysis-14.6.0")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await TestSupport.faultline(["model", folder.appendingPathComponent("CLSPublicEventCache.sqlite").path, "--hashes"])
        #expect(result.status == 0)
        #expect(result.stdout == """
            PublicEvent zTJIAIqKsavaXcXvMGVEKvWBfg63ai4AVTIEIbUeQdk=
            PublicEventCategory /UTpdrvYnolmqlbGIVJgQRzjn5AQsjyrYhRcK5t49D4=
            PublicEventPerformer RB9r+upCanVTC1YJItJHOGOFMXGzdSot3MQ74wzkTuk=
            QueryLocation WXwizI1vtIr1w6esXugU/a6SlqVpcl6XdBEIVr3CwRo=

            """)
    }
}

@Suite struct ModelCommandTests {
    @Test func jsonIsValidAndListsTheEntities() async throws {
        let result = try await TestSupport.faultline(["model", "Samples/Inventory/Inventory.xcdatamodeld", "--json"])
        #expect(result.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        #expect("\(object)".contains("Inventory"))
    }

    @Test func textListsAttributesAndRelationships() async throws {
        let result = try await TestSupport.faultline(["model", "Samples/Inventory/Inventory.xcdatamodeld"])
        #expect(result.stdout.contains("Entity Inventory\n"))
        #expect(result.stdout.contains("  location      Location     to-one  inventories  Nullify\n"))
    }

    @Test func aMissingModelIsAClearError() async throws {
        let result = try await TestSupport.faultline(["model", "/nonexistent.xcdatamodeld"])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("Error: /nonexistent.xcdatamodeld: "))
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func theXcode3FormatIsRefusedWithItsName() async throws {
        let corpus = try Corpus.required().appendingPathComponent("models/xcode3-format/Data Model.xcdatamodel")
        let result = try await TestSupport.faultline(["model", corpus.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("pre-Xcode 4"))
    }
}
