import Faultline
import FaultlineTestSupport
import Foundation
import Testing

/// Values are shown as values in every output mode: no Swift spelling (`Optional(…)`, `[…]`),
/// no placeholders; to-many values as lists, bytes never lost, objects as handles or URIs,
/// long text cut to the width (issue "The shell on real stores", item 3).
@Suite struct ValuesAsValuesTests {
    static let inventory = TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite").path

    /// A store with a Binary attribute, text with newlines, a wide entity, a many-to-many
    /// relationship and an object with an empty to-many.
    static func notesStore() throws -> (store: URL, model: URL) {
        let folder = try TestSupport.temporaryDirectory("values")
        let modelURL = folder.appendingPathComponent("Notes.xcdatamodel")
        try FileManager.default.createDirectory(at: modelURL, withIntermediateDirectories: true)
        let extra = (1...12).map { "<attribute name=\"field\($0)\" optional=\"YES\" attributeType=\"String\"/>" }.joined(separator: "\n")
        try Data("""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel">
                <entity name="Note" representedClassName="Note">
                    <attribute name="title" optional="YES" attributeType="String"/>
                    <attribute name="body" optional="YES" attributeType="String"/>
                    <attribute name="blob" optional="YES" attributeType="Binary"/>
                    <attribute name="small" optional="YES" attributeType="Binary"/>
                    <attribute name="price" optional="YES" attributeType="Decimal"/>
                    <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="notes" inverseEntity="Tag"/>
                </entity>
                <entity name="Tag" representedClassName="Tag">
                    <attribute name="name" optional="YES" attributeType="String"/>
                    <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="tags" inverseEntity="Note"/>
                </entity>
                <entity name="Wide" representedClassName="Wide">
                    \(extra)
                </entity>
            </model>
            """.utf8).write(to: modelURL.appendingPathComponent("contents"))
        let model = try ManagedObjectModel(contentsOf: modelURL)
        let store = folder.appendingPathComponent("Notes.sqlite")
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(
            store: try SQLiteStore(url: store, model: model, options: .init(readOnly: false, createIfMissing: true))))
        let kids = try context.insertObject(entityName: "Tag")
        try kids.setValue("Kids", forKey: "name")
        let beach = try context.insertObject(entityName: "Tag")
        try beach.setValue("Beach", forKey: "name")
        let lonely = try context.insertObject(entityName: "Tag")
        try lonely.setValue("Lonely", forKey: "name")
        let note = try context.insertObject(entityName: "Note")
        try note.setValue("Summer", forKey: "title")
        try note.setValue("Day one.\nDay two.\r\nThe end, with a long tail of words that goes on and on", forKey: "body")
        try note.setValue(Data((0..<40).map { UInt8($0) }), forKey: "blob")
        try note.setValue(Data([0xCA, 0xFE]), forKey: "small")
        try note.setValue(Decimal(string: "12.50"), forKey: "price")
        try note.setValue([kids, beach], forKey: "tags")
        let wide = try context.insertObject(entityName: "Wide")
        for i in 1...12 { try wide.setValue("value number \(i)", forKey: "field\(i)") }
        try context.save()
        return (store, modelURL)
    }

    static func uuid(_ store: URL) async throws -> String {
        try await TestSupport.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [store.path, "SELECT Z_UUID FROM Z_METADATA"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func noSwiftSpellingOrPlaceholderInAnyMode() async throws {
        let (store, model) = try Self.notesStore()
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        for mode in ["table", "box", "line", "csv", "json", "markdown", "list", "tabs", "quote", "insert", "html"] {
            let result = try await TestSupport.faultline([store.path, "--model", model.path, "--sql-debug", "0"], stdin: """
                .mode \(mode)
                fetch Note show title, tags, tags.name, tags.notes.title, blob, small, price
                fetch Tag sort by name show name, notes, notes.title
                show $1
                """)
            let inventory = try await TestSupport.faultline([Self.inventory, "--sql-debug", "0"], stdin: """
                .mode \(mode)
                fetch Asset show label, inventories, inventories.location.label
                show $1
                $1.inventories.location
                fetch Inventory sort by date limit 3
                """)
            for output in [result.stdout, inventory.stdout] {
                #expect(!output.contains("Optional("), "\(mode): \(output)")
                #expect(!output.contains("[Optional"), "\(mode): \(output)")
                #expect(!output.contains("<Asset") && !output.contains("<Inventory") && !output.contains("<Location") && !output.contains("<Tag"), "\(mode): \(output)")
                #expect(!output.contains("bytes:"), "\(mode): \(output)")
                #expect(!output.contains("AnyHashable"), "\(mode): \(output)")
            }
            #expect(result.status == 0 && inventory.status == 0, "\(mode): \(result.stderr)\(inventory.stderr)")
        }
    }

    @Test func toManyValuesAreJoinedInTablesAndArraysInJSON() async throws {
        let (store, model) = try Self.notesStore()
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let uuid = try await Self.uuid(store)
        let table = try await TestSupport.faultline([store.path, "--model", model.path, "--sql-debug", "0"], stdin: """
            fetch Note show title, tags.name, tags
            fetch Tag where name == "Lonely" show name, notes.title
            """)
        #expect(table.stdout == """
            +----+--------+-------------+--------+
            | #  | title  | tags.name   | tags   |
            +----+--------+-------------+--------+
            | $1 | Summer | Kids, Beach | $2, $3 |
            +----+--------+-------------+--------+
            1 row
            +----+--------+-------------+
            | #  | name   | notes.title |
            +----+--------+-------------+
            | $4 | Lonely | (empty)     |
            +----+--------+-------------+
            1 row

            """, "\(table.stderr)")
        let json = try await TestSupport.faultline([store.path, "--model", model.path, "--sql-debug", "0"], stdin: """
            .mode json
            fetch Note show title, tags.name, tags
            fetch Tag where name == "Lonely" show name, notes.title
            """)
        #expect(json.stdout == """
            [{"title":"Summer","tags.name":["Kids","Beach"],"tags":["x-coredata://\(uuid)/Tag/p1","x-coredata://\(uuid)/Tag/p2"]}]
            [{"name":"Lonely","notes.title":[]}]

            """, "\(json.stderr)")
        let csv = try await TestSupport.faultline([store.path, "--model", model.path, "--sql-debug", "0"], stdin: """
            .mode csv
            fetch Note show title, tags.name, tags
            """)
        #expect(csv.stdout == """
            title,tags.name,tags\r
            Summer,"[""Kids"",""Beach""]","[""x-coredata://\(uuid)/Tag/p1"",""x-coredata://\(uuid)/Tag/p2""]"

            """, "\(csv.stderr)")
    }

    @Test func collectionOperatorsWorkInShowAndKeyPaths() async throws {
        let result = try await TestSupport.faultline([Self.inventory, "--sql-debug", "0"], stdin: """
            fetch Asset sort by label show label, inventories.@count, inventories.@sum.count, inventories.@avg.count, inventories.@min.count, inventories.@max.date
            $1.inventories.@sum.count
            $1.inventories.location.label
            $1.inventories.location.@distinctUnionOfObjects.label
            """)
        #expect(result.status == 0, "\(result.stderr)")
        // The same numbers as SQL's count, sum, avg, min and max grouped by asset.
        #expect(result.stdout == """
            +----+---------------+--------------------+------------------------+------------------------+------------------------+--------------------------+
            | #  | label         | inventories.@count | inventories.@sum.count | inventories.@avg.count | inventories.@min.count | inventories.@max.date    |
            +----+---------------+--------------------+------------------------+------------------------+------------------------+--------------------------+
            | $1 | Bicycle       | 1                  | 2                      | 2                      | 2                      | 2026-11-09T14:00:00Z     |
            | $2 | Camping Stove | 2                  | 2                      | 1                      | 1                      | 2026-11-16T18:45:30.500Z |
            | $3 | Coffee Mug    | 2                  | 16                     | 8                      | 4                      | 2026-11-16T18:45:30.500Z |
            | $4 | Laptop        | 1                  | 1                      | 1                      | 1                      | 2026-11-16T18:45:30.500Z |
            | $5 | T-shirt       | 2                  | 36                     | 18                     | 6                      | 2026-11-02T09:30:00Z     |
            +----+---------------+--------------------+------------------------+------------------------+------------------------+--------------------------+
            5 rows
            2
            +----------------------------+
            | inventories.location.label |
            +----------------------------+
            | Garage                     |
            +----------------------------+
            1 row
            +----------------------------------------------------+
            | inventories.location.@distinctUnionOfObjects.label |
            +----------------------------------------------------+
            | Garage                                             |
            +----------------------------------------------------+
            1 row

            """)
        // 5 to-many faults and 8 object faults through Asset.inventories: neither is a storm.
        #expect(!result.stderr.contains("fault storm"), "\(result.stderr)")
        let errors = try await TestSupport.faultline([Self.inventory, "--sql-debug", "0", "--keep-going"], stdin: """
            fetch Asset show label.@count
            fetch Asset show inventories.@median.count
            fetch Asset show inventories.@count.count
            fetch Inventory show asset.label.@sum
            """)
        #expect(errors.stderr == """
            Error: line 1: keypath label.@count: @count needs a to-many relationship before it, as in inventories.@count
            Error: line 2: keypath inventories.@median.count: unknown collection operator @median; operators are @count, @sum, @avg, @min, @max, @distinctUnionOfObjects, @unionOfObjects
            Error: line 3: keypath inventories.@count.count: @count ends a key path
            Error: line 4: keypath asset.label.@sum: @sum needs a to-many relationship before it, as in inventories.@sum

            """)
    }

    @Test func binaryIsShortHexInTablesAndWholeElsewhere() async throws {
        let (store, model) = try Self.notesStore()
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let bytes = Data((0..<40).map { UInt8($0) })
        let run = { (mode: String) in
            try await TestSupport.faultline([store.path, "--model", model.path, "--sql-debug", "0"], stdin: ".mode \(mode)\nfetch Note show blob, small")
        }
        #expect(try await run("table").stdout.contains("| $1 | 000102030405060708090a0b0c0d0e0f… (40 bytes) | cafe  |"))
        #expect(try await run("json").stdout == "[{\"blob\":\"\(bytes.base64EncodedString())\",\"small\":\"yv4=\"}]\n")
        #expect(try await run("csv").stdout == "blob,small\r\n\(bytes.base64EncodedString()),yv4=\n")
        #expect(try await run("quote").stdout.contains("X'000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F2021222324252627',X'CAFE'"))
        #expect(try await run("list").stdout.contains("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2021222324252627|cafe"))
        // Decimals keep their digits and are numbers in JSON.
        let price = try await TestSupport.faultline([store.path, "--model", model.path, "--sql-debug", "0"], stdin: ".mode json\nfetch Note show price")
        #expect(price.stdout == "[{\"price\":12.5}]\n")
    }

    @Test func relationshipsAreHandlesInTablesAndURIsInJSONAndCSV() async throws {
        let uuid = "F00DF00D-0000-4000-8000-000000000001"
        let table = try await TestSupport.faultline([Self.inventory, "--sql-debug", "0"], stdin: "fetch Inventory where date != nil sort by date limit 1\n$2.label")
        #expect(table.stdout.contains("| $1 | 12    | 2026-11-02T09:30:00Z | $2    | $3       |"), "\(table.stdout)")
        #expect(table.stdout.hasSuffix("Coffee Mug\n"), "a related object's handle works like any other")
        let json = try await TestSupport.faultline([Self.inventory, "--sql-debug", "0"], stdin: ".mode json\nfetch Inventory where date != nil sort by date limit 1")
        #expect(json.stdout == "[{\"count\":12,\"date\":\"2026-11-02T09:30:00Z\",\"asset\":\"x-coredata://\(uuid)/Asset/p1\",\"location\":\"x-coredata://\(uuid)/Location/p1\"}]\n")
        let handles = try await TestSupport.faultline([Self.inventory, "--sql-debug", "0"], stdin: ".mode json\n.handles on\nfetch Location sort by label limit 1")
        #expect(handles.stdout == "[{\"#\":\"$1\",\"label\":\"Garage\"}]\n")
    }

    @Test func anUnfiredToManyIsNotAnEmptyOne() async throws {
        let (store, model) = try Self.notesStore()
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let json = try await TestSupport.faultline([store.path, "--model", model.path, "--sql-debug", "0"], stdin: """
            fetch Tag where name == "Lonely"
            .mode json
            show $1
            $1.notes
            show $1
            """)
        let table = try await TestSupport.faultline([store.path, "--model", model.path, "--sql-debug", "0"], stdin: """
            fetch Tag where name == "Lonely"
            show $1
            $1.notes
            show $1
            """)
        #expect(table.stdout.contains("| notes    | to-many Note, fault | (not loaded) |"), "\(table.stdout)")
        #expect(table.stdout.contains("| notes    | to-many Note, 0 objects | (empty) |"), "\(table.stdout)")
        #expect(json.stdout.contains("{\"property\":\"notes\",\"type\":\"to-many Note, fault\",\"value\":{\"fault\":true}}"), "\(json.stdout)")
        #expect(json.stdout.contains("{\"property\":\"notes\",\"type\":\"to-many Note, 0 objects\",\"value\":[]}"), "\(json.stdout)")
    }

    @Test func newlinesShowAsReturnSymbolsAndValuesAreCutToTheWidth() async throws {
        let (store, model) = try Self.notesStore()
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let result = try await TestSupport.faultline([store.path, "--model", model.path, "--sql-debug", "0"], stdin: """
            fetch Note show title, body
            .width 40
            fetch Note show title, body
            .mode line
            fetch Note show title, body
            .mode table
            .width off
            .show
            """)
        #expect(result.stdout.hasPrefix("""
            +----+--------+--------------------------------------------------------------------------+
            | #  | title  | body                                                                     |
            +----+--------+--------------------------------------------------------------------------+
            | $1 | Summer | Day one.⏎Day two.⏎The end, with a long tail of words that goes on and on |
            +----+--------+--------------------------------------------------------------------------+
            1 row
            +----+--------+------------------------+
            | #  | title  | body                   |
            +----+--------+------------------------+
            | $1 | Summer | Day one.⏎Day two.⏎The… |
            +----+--------+------------------------+
            1 row
                # = $1
            title = Summer
             body = Day one.⏎Day two.⏎The end, with…
            1 row
            """), "\(result.stdout)")
        #expect(result.stdout.contains("width        off"))
        // The text itself is whole in JSON.
        let json = try await TestSupport.faultline([store.path, "--model", model.path, "--sql-debug", "0"], stdin: ".width 40\n.mode json\nfetch Note show body")
        #expect(json.stdout == "[{\"body\":\"Day one.\\nDay two.\\r\\nThe end, with a long tail of words that goes on and on\"}]\n")
        let bad = try await TestSupport.faultline([store.path, "--model", model.path], stdin: ".width 5")
        #expect(bad.stderr == "Error: line 1: .width needs a number of columns from 20, auto (the terminal's width) or off (now auto)\n")
    }

    @Test func aWideEntityShowsWhatFitsAndSaysHowToSeeTheRest() async throws {
        let (store, model) = try Self.notesStore()
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let result = try await TestSupport.faultline([store.path, "--model", model.path, "--sql-debug", "0"], stdin: ".width 60\nfetch Wide\nfetch Wide show field1, field2, field3, field4, field5, field6, field7")
        #expect(result.stdout == """
            +----+----------+----------+----------+----------+---------+
            | #  | field1   | field10  | field11  | field12  | field2  |
            +----+----------+----------+----------+----------+---------+
            | $1 | value n… | value n… | value n… | value n… | value … |
            +----+----------+----------+----------+----------+---------+
            1 row; 7 more columns not shown (field3, field4, field5, field6, field7, field8, field9): pick columns with show KEY, …, or see them all with .mode line or .width off
            +----+--------+--------+--------+--------+--------+--------+--------+
            | #  | field1 | field2 | field3 | field4 | field5 | field6 | field7 |
            +----+--------+--------+--------+--------+--------+--------+--------+
            | $1 | value… | value… | value… | value… | value… | value… | value… |
            +----+--------+--------+--------+--------+--------+--------+--------+
            1 row

            """)
        // Every line of the default columns fits the 60 columns; columns asked for by name are
        // all shown, each cut no narrower than 6 (a wider table than the width, as asked).
        #expect(result.stdout.components(separatedBy: "\n").prefix(5).allSatisfy { $0.count == 60 })
    }

    @Test func aParentEntityFetchShowsEachRowsEntity() async throws {
        let result = try await TestSupport.faultline([TestSupport.packageRoot.appendingPathComponent("Samples/Triage/Triage.sqlite").path, "--sql-debug", "0"], stdin: "fetch Injury sort by admitted limit 2 show patient")
        #expect(result.stdout == """
            +----+----------+--------------+
            | #  | entity   | patient      |
            +----+----------+--------------+
            | $1 | Burn     | A. Okafor    |
            | $2 | Fracture | B. Lindqvist |
            +----+----------+--------------+
            2 rows

            """)
    }
}
