import Faultline
import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

// Golden SQL of the result types, functions and grouping (`Documentation/Fetching.md` has the
// sources). Seen in published SQLDebug logs:
// - S-COUNT (fatbobman, "在 Core Data 中查询和使用 count 的若干方法", 2022, SQLDebug 1 logs,
//   https://github.com/fatbobman/FatBlog/blob/2727484f56d086180484b2a0e1b76cab19626420/Content/posts/countInCoreData.md):
//     SELECT t0.ZBIRTHOFYEAR, COUNT( t0.ZBIRTHOFYEAR) FROM ZITEM t0 GROUP BY  t0.ZBIRTHOFYEAR
//     SELECT t0.ZBIRTHOFYEAR, COUNT( t0.ZBIRTHOFYEAR) AS __var0 FROM ZITEM t0 GROUP BY  t0.ZBIRTHOFYEAR HAVING __var0 > ?
//     SELECT total( t0.ZATTACHMENTCOUNT) FROM ZITEM t0
//     SELECT COUNT( t1.Z_PK) FROM ZITEM t0 LEFT OUTER JOIN ZATTACHMENT t1 ON t0.Z_PK = t1.ZITEM
//     SELECT COUNT(*) FROM ZITEM
// - L-FAULT (objc.io Core Data book, quoted in the SQL-log reference): an objects fetch
//   without property values, `SELECT t0.Z_ENT, t0.Z_PK FROM ZGEOGRAPHICREGION t0 WHERE …`.
// Inferred (not seen in a log): MIN/MAX/AVG spelling, the select list of plain attributes
// without GROUP BY, to-one key paths as LEFT OUTER JOIN, SELECT DISTINCT, several GROUP BY
// items joined by ", ", partial objects' `SELECT 0, t0.Z_PK, t0.Z_OPT, <columns>`.

/// Opens a copy of a sample store and records the statements it runs.
private func openSample(_ name: String, writable: Bool = false) throws -> (ManagedObjectContext, SQLStatements, Connection) {
    let folder = TestSupport.packageRoot.appendingPathComponent("Samples/\(name)")
    let copyFolder = try TestSupport.temporaryDirectory("faultline-result-types")
    let copy = copyFolder.appendingPathComponent("\(name).sqlite")
    try FileManager.default.copyItem(at: folder.appendingPathComponent("\(name).sqlite"), to: copy)
    let model = try ManagedObjectModel(contentsOf: folder.appendingPathComponent("\(name).xcdatamodeld"))
    let coordinator = try writable
        ? PersistentStoreCoordinator(model: model, storeURL: copy, options: .init(readOnly: false))
        : PersistentStoreCoordinator(model: model, storeURL: copy)
    let statements = SQLStatements()
    coordinator.store.connection.addTraceObserver { event in
        if case .statement(let sql, let arguments) = event { statements.append(sql, arguments) }
    }
    return (ManagedObjectContext(coordinator: coordinator), statements, try Connection(path: copy.path, mode: .readOnly))
}

/// A value as text, the same for a Swift value and an SQLite one (`1`, `1.5`, `"x"`, `p3`).
func answerText(_ value: Any?) -> String {
    switch value {
    case nil: return "nil"
    case let v as SQLValue:
        switch v {
        case .null: return "nil"
        case .integer(let i): return String(i)
        case .real(let d): return d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        case .text(let s): return "\"\(s)\""
        case .blob(let b): return "\(b.count) bytes"
        }
    case let id as ManagedObjectID: return "p\(id.primaryKey)"
    case let s as String: return "\"\(s)\""
    case let d as Double: return d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
    case let date as Date: return answerText(SQLValue.real(date.timeIntervalSinceReferenceDate))
    case let i as Int64: return String(i)
    case let i as Int32: return String(i)
    case let i as Int16: return String(i)
    case let i as Int: return String(i)
    case let b as Bool: return b ? "1" : "0"
    default: return "\(value!)"
    }
}

/// Dictionaries as rows of text in the order of `keys`.
func answerRows(_ dictionaries: [[String: Any]], _ keys: [String]) -> [[String]] {
    dictionaries.map { d in keys.map { answerText(d[$0]) } }
}

/// The rows of hand-written SQL as text.
func handRows(_ connection: Connection, _ sql: String, _ arguments: [SQLValue] = []) -> [[String]] {
    do {
        return try connection.query(sql, arguments).map { $0.values.map { answerText($0) } }
    } catch {
        Issue.record(error, "hand-written SQL failed: \(sql)")
        return []
    }
}

private func count(_ name: String, _ keyPath: String, _ type: AttributeType = .integer64) -> FetchProperty {
    .expression(ExpressionDescription(name: name, expression: .function("count:", [.keyPath(keyPath)]), expressionResultType: type))
}

private func function(_ function: String, _ name: String, _ keyPath: String, _ type: AttributeType) -> FetchProperty {
    .expression(ExpressionDescription(name: name, expression: .function(function, [.keyPath(keyPath)]), expressionResultType: type))
}

@Suite("Result types: golden SQL and answers against hand-written SQL")
struct FetchResultTypeTests {
    @Test func objectIDsWithoutValuesSelectOnlyTheKeys() throws {
        let (context, statements, db) = try openSample("Recipes")
        var request = FetchRequest(entityName: "Recipe")
        request.resultType = .managedObjectID
        request.includesPropertyValues = false
        request.predicate = try FLPredicate(format: "type.name == %@", "Dessert")
        request.sortDescriptors = [FLSortDescriptor(key: "name")]
        guard case .objectIDs(let ids) = try context.execute(request) else { Issue.record("not IDs"); return }
        // Shape of L-FAULT / L-STRING: only the entity column (0 here) and Z_PK.
        #expect(statements.sql == ["SELECT 0, t0.Z_PK FROM ZRECIPE t0 JOIN ZRECIPETYPE t1 ON t0.ZTYPE = t1.Z_PK WHERE  t1.ZNAME = ? ORDER BY t0.ZNAME"])
        #expect(ids.map { answerText($0) } == handRows(db, "SELECT r.Z_PK FROM ZRECIPE r JOIN ZRECIPETYPE t ON r.ZTYPE = t.Z_PK WHERE t.ZNAME = 'Dessert' ORDER BY r.ZNAME").map { "p" + $0[0] })
        #expect(ids.allSatisfy { $0.entityName == "Recipe" } == true)
        #expect(context.registeredObjects.isEmpty)  // IDs, no objects
    }

    @Test func objectIDsWithValuesReadTheWholeRowsAsCoreDataDoes() throws {
        let (context, statements, _) = try openSample("Inventory")
        var request = FetchRequest(entityName: "Location")
        request.resultType = .managedObjectID
        let ids = try context.fetchObjectIDs(request)
        #expect(statements.sql == ["SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZLOCATION t0"])
        #expect(ids.map(\.primaryKey) == [1, 2, 3])
    }

    @Test func objectsWithoutPropertyValuesAreFaults() throws {
        let (context, statements, _) = try openSample("Inventory")
        var request = FetchRequest(entityName: "Asset")
        request.includesPropertyValues = false
        request.sortDescriptors = [FLSortDescriptor(key: "label", ascending: false)]
        let assets = try context.fetch(request)
        #expect(statements.sql == ["SELECT 0, t0.Z_PK FROM ZASSET t0 ORDER BY t0.ZLABEL DESC"])
        #expect(assets.allSatisfy { $0.isFault })
        #expect(assets.first?.value(forKey: "label") as? String == "T-shirt")
        #expect(statements.sql.last == "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZASSET t0 WHERE  t0.Z_PK = ?")
    }

    @Test func dictionariesOfAttributesToOnesAndObjectID() throws {
        let (context, statements, db) = try openSample("Recipes")
        var request = FetchRequest(entityName: "Recipe")
        request.resultType = .dictionary
        request.propertiesToFetch = ["objectID", "name", "prepTime", "type", "type.name"]
        request.sortDescriptors = [FLSortDescriptor(key: "name")]
        request.fetchLimit = 4
        let rows = try context.fetchDictionaries(request)
        #expect(statements.sql == [
            "SELECT t0.Z_PK, t0.ZNAME, t0.ZPREPTIME, t0.ZTYPE, t1.ZNAME FROM ZRECIPE t0 LEFT OUTER JOIN ZRECIPETYPE t1 ON t0.ZTYPE = t1.Z_PK ORDER BY t0.ZNAME  LIMIT 4"
        ])
        let keys = ["objectID", "name", "prepTime", "type", "type.name"]
        let hand = handRows(db, "SELECT r.Z_PK, r.ZNAME, r.ZPREPTIME, r.ZTYPE, t.ZNAME FROM ZRECIPE r LEFT JOIN ZRECIPETYPE t ON r.ZTYPE = t.Z_PK ORDER BY r.ZNAME LIMIT 4")
        #expect(answerRows(rows, keys) == hand.map { ["p" + $0[0], $0[1], $0[2], "p" + $0[3], $0[4]] })
        #expect((rows.first?["type"] as? ManagedObjectID)?.entityName == "RecipeType")
        #expect((rows.first?["objectID"] as? ManagedObjectID)?.entityName == "Recipe")
    }

    @Test func groupByThroughAToOneWithCountAndAverage() throws {
        let (context, statements, db) = try openSample("Recipes")
        var request = FetchRequest(entityName: "Recipe")
        request.resultType = .dictionary
        request.propertiesToFetch = ["type.name", count("recipes", "name"), function("average:", "prep", "prepTime", .double)]
        request.propertiesToGroupBy = ["type.name"]
        request.sortDescriptors = [FLSortDescriptor(key: "type.name")]
        let rows = try context.fetchDictionaries(request)
        #expect(statements.sql == [
            "SELECT t1.ZNAME, COUNT( t0.ZNAME), AVG( t0.ZPREPTIME) FROM ZRECIPE t0 LEFT OUTER JOIN ZRECIPETYPE t1 ON t0.ZTYPE = t1.Z_PK GROUP BY  t1.ZNAME ORDER BY t1.ZNAME"
        ])
        let hand = handRows(db, "SELECT t.ZNAME, count(r.ZNAME), avg(r.ZPREPTIME) FROM ZRECIPE r LEFT JOIN ZRECIPETYPE t ON r.ZTYPE = t.Z_PK GROUP BY t.ZNAME ORDER BY t.ZNAME")
        #expect(answerRows(rows, ["type.name", "recipes", "prep"]) == hand)
        #expect(rows.count == 12)
        #expect(rows.first(where: { $0["type.name"] as? String == "Dessert" })?["recipes"] as? Int64 == 3)
    }

    /// S-COUNT's grouped count with HAVING, on the Inventory sample.
    @Test func havingNamesAnAggregateByItsVariable() throws {
        let (context, statements, db) = try openSample("Inventory")
        var request = FetchRequest(entityName: "Inventory")
        request.resultType = .dictionary
        request.propertiesToFetch = ["count", count("n", "count", .integer32)]
        request.propertiesToGroupBy = ["count"]
        request.havingPredicate = try FLPredicate(format: "$n > 1")
        let rows = try context.fetchDictionaries(request)
        #expect(statements.sql == ["SELECT t0.ZCOUNT, COUNT( t0.ZCOUNT) AS __var0 FROM ZINVENTORY t0 GROUP BY  t0.ZCOUNT HAVING __var0 > ?"])
        #expect(statements.arguments == [[.integer(1)]])
        #expect(answerRows(rows, ["count", "n"]) == (handRows(db, "SELECT ZCOUNT, count(ZCOUNT) FROM ZINVENTORY GROUP BY ZCOUNT HAVING count(ZCOUNT) > 1")))
        #expect(rows.first?["n"] as? Int32 == 3)
    }

    @Test func groupingWithoutHavingHasNoAlias() throws {
        let (context, statements, _) = try openSample("Inventory")
        var request = FetchRequest(entityName: "Inventory")
        request.resultType = .dictionary
        request.propertiesToFetch = ["count", count("n", "count")]
        request.propertiesToGroupBy = ["count"]
        _ = try context.fetchDictionaries(request)
        // S-COUNT, method 11, with the names of the Inventory sample.
        #expect(statements.sql == ["SELECT t0.ZCOUNT, COUNT( t0.ZCOUNT) FROM ZINVENTORY t0 GROUP BY  t0.ZCOUNT"])
    }

    @Test func sumMinMaxAverageOverTheWholeTable() throws {
        let (context, statements, db) = try openSample("Inventory")
        var request = FetchRequest(entityName: "Inventory")
        request.resultType = .dictionary
        request.propertiesToFetch = [
            function("sum:", "total", "count", .integer64), function("min:", "first", "date", .date),
            function("max:", "last", "date", .date), function("average:", "mean", "count", .double),
        ]
        request.predicate = try FLPredicate(format: "count > %d", 1)
        let rows = try context.fetchDictionaries(request)
        #expect(statements.sql == ["SELECT total( t0.ZCOUNT), MIN( t0.ZDATE), MAX( t0.ZDATE), AVG( t0.ZCOUNT) FROM ZINVENTORY t0 WHERE  t0.ZCOUNT > ?"])
        #expect(answerRows(rows, ["total", "first", "last", "mean"])
            == (handRows(db, "SELECT total(ZCOUNT), min(ZDATE), max(ZDATE), avg(ZCOUNT) FROM ZINVENTORY WHERE ZCOUNT > 1")))
        #expect(rows.first?["total"] as? Int64 == 54)
        #expect(rows.first?["first"] is Date)
    }

    @Test func countOfAToManyJoinsIt() throws {
        let (context, statements, db) = try openSample("Recipes")
        var request = FetchRequest(entityName: "Recipe")
        request.resultType = .dictionary
        request.propertiesToFetch = [count("ingredients", "ingredients")]
        let rows = try context.fetchDictionaries(request)
        // S-COUNT, method 9: `count:` of a to-many relationship.
        #expect(statements.sql == ["SELECT COUNT( t1.Z_PK) FROM ZRECIPE t0 LEFT OUTER JOIN ZINGREDIENT t1 ON t0.Z_PK = t1.ZRECIPE"])
        #expect(answerRows(rows, ["ingredients"]) == (handRows(db, "SELECT count(i.Z_PK) FROM ZRECIPE r LEFT JOIN ZINGREDIENT i ON r.Z_PK = i.ZRECIPE")))
    }

    @Test func distinctValues() throws {
        let (context, statements, db) = try openSample("Recipes")
        var request = FetchRequest(entityName: "Recipe")
        request.resultType = .dictionary
        request.propertiesToFetch = ["prepTime"]
        request.returnsDistinctResults = true
        request.sortDescriptors = [FLSortDescriptor(key: "prepTime")]
        let rows = try context.fetchDictionaries(request)
        #expect(statements.sql == ["SELECT DISTINCT t0.ZPREPTIME FROM ZRECIPE t0 ORDER BY t0.ZPREPTIME"])
        #expect(answerRows(rows, ["prepTime"]) == (handRows(db, "SELECT DISTINCT ZPREPTIME FROM ZRECIPE ORDER BY ZPREPTIME")))
    }

    @Test func countResultType() throws {
        let (context, statements, _) = try openSample("Recipes")
        var request = FetchRequest(entityName: "Recipe")
        request.resultType = .count
        guard case .count(let n) = try context.execute(request) else { Issue.record("not a count"); return }
        #expect(n == 16)
        #expect(statements.sql == ["SELECT COUNT(*) FROM ZRECIPE"])  // S-COUNT, method 1
    }

    @Test func partialObjectsLoadTheRestWhenAnotherPropertyIsRead() throws {
        let (context, statements, _) = try openSample("Recipes")
        var request = FetchRequest(entityName: "Recipe")
        request.propertiesToFetch = ["name", "type"]
        request.sortDescriptors = [FLSortDescriptor(key: "name")]
        request.fetchLimit = 2
        let recipes = try context.fetch(request)
        #expect(statements.sql == ["SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME, t0.ZTYPE FROM ZRECIPE t0 ORDER BY t0.ZNAME  LIMIT 2"])
        #expect(recipes.map { $0.value(forKey: "name") as? String } == ["Beef Bourguignon", "Caesar Salad"])
        #expect(statements.sql.count == 1)
        #expect(recipes[0].value(forKey: "prepTime") as? String == "3 hours")
        #expect(statements.sql.count == 2)
        #expect(statements.sql[1] == "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZINSTRUCTIONS, t0.ZNAME, t0.ZOVERVIEW, t0.ZPREPTIME, t0.ZTYPE FROM ZRECIPE t0 WHERE  t0.Z_PK = ?")
        #expect(recipes[0].value(forKey: "name") as? String == "Beef Bourguignon")
    }

    @Test func partialObjectsInBatchesLoadOnlyTheirColumns() throws {
        let (context, statements, _) = try openSample("Recipes")
        var request = FetchRequest(entityName: "Recipe")
        request.propertiesToFetch = ["name"]
        request.sortDescriptors = [FLSortDescriptor(key: "name")]
        request.fetchBatchSize = 5
        let recipes = try context.fetch(request)
        #expect(recipes.count == 16)
        #expect(recipes[0].value(forKey: "name") as? String == "Beef Bourguignon")
        #expect(recipes[4].value(forKey: "name") as? String != nil)
        #expect(statements.sql == [
            "SELECT 0, t0.Z_PK FROM ZRECIPE t0 ORDER BY t0.ZNAME",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZRECIPE t0 WHERE  t0.Z_PK IN (SELECT * FROM _Z_intarray0)  LIMIT 5",
        ])
        #expect(recipes[0].value(forKey: "prepTime") as? String == "3 hours")
        #expect(statements.sql.count == 3)
    }

    @Test func invalidCombinationsSayWhy() throws {
        let (context, _, _) = try openSample("Recipes")
        var grouped = FetchRequest(entityName: "Recipe")
        grouped.propertiesToGroupBy = ["type.name"]
        #expect(throws: FetchRequestError.self) { try context.fetch(grouped) }
        grouped.resultType = .dictionary
        grouped.propertiesToFetch = ["name", count("n", "name")]
        let loose = #expect(throws: FetchRequestError.self) { try context.fetchDictionaries(grouped) }
        #expect(loose?.message.contains("name is neither") == true)
        var median = FetchRequest(entityName: "Recipe")
        median.resultType = .dictionary
        median.propertiesToFetch = [function("median:", "m", "name", .double)]
        let unsupported = #expect(throws: FetchRequestError.self) { try context.fetchDictionaries(median) }
        #expect(unsupported?.message.contains("median:") == true)
        var having = FetchRequest(entityName: "Recipe")
        having.resultType = .dictionary
        having.propertiesToFetch = [count("n", "name")]
        having.havingPredicate = try FLPredicate(format: "$n > 1")
        #expect(throws: FetchRequestError.self) { try context.fetchDictionaries(having) }
        var toMany = FetchRequest(entityName: "Recipe")
        toMany.resultType = .dictionary
        toMany.propertiesToFetch = ["ingredients"]
        #expect(throws: FetchRequestError.self) { try context.fetchDictionaries(toMany) }
    }

    /// Apple, `includesPendingChanges`: dictionary results reflect the store; ID results
    /// include the context's unsaved inserts and leave out its deletes.
    @Test func pendingChangesCountForIDsNotForDictionaries() throws {
        let (context, _, _) = try openSample("Inventory")
        let asset = try context.insertObject(entityName: "Asset")
        try asset.setValue("Zeppelin", forKey: "label")
        let laptop = try context.fetch(FetchRequest(entityName: "Asset")).first { $0.value(forKey: "label") as? String == "Laptop" }
        if let laptop { context.delete(laptop) }
        var ids = FetchRequest(entityName: "Asset")
        ids.resultType = .managedObjectID
        let found = try context.fetchObjectIDs(ids)
        #expect(found.contains(asset.objectID))
        #expect(!found.contains { $0 == laptop?.objectID })
        var values = FetchRequest(entityName: "Asset")
        values.resultType = .dictionary
        values.propertiesToFetch = ["label"]
        let labels = try context.fetchDictionaries(values).compactMap { $0["label"] as? String }
        #expect(!labels.contains("Zeppelin"))
        #expect(labels.contains("Laptop"))
    }
}

/// Dictionaries read a batch at a time: the keys first, each batch's values when reached.
@Suite struct DictionaryBatchTests {
    @Test func dictionariesAreReadABatchAtATimeInTheKeysOrder() throws {
        let (context, statements, _) = try openSample("Recipes")
        var request = FetchRequest(entityName: "Recipe")
        request.resultType = .dictionary
        request.propertiesToFetch = ["name", "prepTime", "type.name"]
        request.predicate = try FLPredicate(format: "prepTime != nil")
        request.sortDescriptors = [FLSortDescriptor(key: "name", ascending: true)]
        let whole = try context.fetchDictionaries(request)
        statements.removeAll()
        request.fetchBatchSize = 4
        let batched = try context.fetchDictionaryBatches(request)
        expectSQL(statements.sql, ["SELECT 0, t0.Z_PK FROM ZRECIPE t0 WHERE  t0.ZPREPTIME IS NOT NULL ORDER BY t0.ZNAME"])
        #expect(batched.count == whole.count && whole.count > 8)
        statements.removeAll()
        _ = batched[0]
        _ = batched[3]
        expectSQL(statements.sql, [
            "SELECT t0.Z_PK, t0.ZNAME, t0.ZPREPTIME, t1.ZNAME FROM ZRECIPE t0 LEFT OUTER JOIN ZRECIPETYPE t1 ON t0.ZTYPE = t1.Z_PK WHERE t0.Z_PK IN (SELECT * FROM _Z_intarray0)",
        ])
        _ = batched[4]
        #expect(statements.sql.count == 2, "the second batch is read when reached")
        // Row for row the same dictionaries as the whole fetch.
        #expect(batched.map { $0.keys.sorted() } == whole.map { $0.keys.sorted() })
        #expect(batched.map { answerText($0["name"]) } == whole.map { answerText($0["name"]) })
        #expect(batched.map { answerText($0["type.name"]) } == whole.map { answerText($0["type.name"]) })
        // Grouped requests have no keys to batch by: read whole.
        var grouped = request
        grouped.propertiesToFetch = ["type.name", .expression(ExpressionDescription(name: "n", expression: try FLExpression(format: "count:(name)"), expressionResultType: .integer64))]
        grouped.propertiesToGroupBy = ["type.name"]
        grouped.sortDescriptors = []
        #expect(try context.fetchDictionaryBatches(grouped).count == context.fetchDictionaries(grouped).count)
    }
}

/// ``FetchedRows`` against the dictionaries of the same requests: same SQL, same keys and
/// values, NULLs absent.
@Suite struct FetchedRowsTests {
    /// A dictionary's values as text with their types, to compare `Any`s.
    private func described(_ row: [String: Any]) -> [String: String] {
        row.mapValues { "\(type(of: $0)): \($0)" }
    }

    @Test func rowsOfABigFetchSpanSeveralBuffersAndReadTheSame() throws {
        let (context, _, _) = try openSample("Recipes", writable: true)
        for i in 0..<2_500 {
            let ingredient = try context.insertObject(entityName: "Ingredient")
            try ingredient.setValue("ingredient \(i)", forKey: "name")
            try ingredient.setValue(i % 3 == 0 ? nil : "\(i) g", forKey: "amount")
            try ingredient.setValue(Int16(i % 100), forKey: "displayOrder")
        }
        try context.save()
        var request = FetchRequest(entityName: "Ingredient")
        request.resultType = .dictionary
        request.propertiesToFetch = ["name", "amount", "displayOrder", "objectID"]
        request.sortDescriptors = [FLSortDescriptor(key: "name")]
        let dictionaries = try context.fetchDictionaries(request)
        let rows = try context.fetchRows(request)
        // 4,096 values a buffer: 1,024 rows of these four keys, so three buffers and more.
        #expect(rows.count == dictionaries.count && rows.count > 2 * 1_024)
        #expect(rows.map { described($0.dictionary) } == dictionaries.map(described))
        for index in [0, 1_023, 1_024, 1_025, 2_047, 2_048, rows.count - 1] {
            #expect(rows[index]["name", as: String.self] == dictionaries[index]["name"] as? String)
            #expect(rows[index][2, as: Int16.self] == dictionaries[index]["displayOrder"] as? Int16)
        }
        // The iterator (which walks the buffers) gives the rows the subscript gives, across
        // the buffers' edges, and stops after the last.
        var iterator = rows.makeIterator()
        var iterated = 0
        while let row = iterator.next() {
            #expect(row["name", as: String.self] == rows[iterated]["name", as: String.self])
            #expect(row["amount"].map { "\($0)" } == dictionaries[iterated]["amount"].map { "\($0)" })
            iterated += 1
        }
        #expect(iterated == rows.count)
        #expect(iterator.next() == nil)
        // A limit above a buffer's rows: full buffers, the same rows.
        var limited = request
        limited.fetchLimit = 1_500
        let limitedRows = try context.fetchRows(limited)
        #expect(limitedRows.count == 1_500)
        #expect(limitedRows.map { described($0.dictionary) } == dictionaries.prefix(1_500).map(described))
        #expect(Array(limitedRows).map { $0["name", as: String.self] } == dictionaries.prefix(1_500).map { $0["name"] as? String })
    }

    @Test func noRowsIsAnEmptyCollection() throws {
        let (context, _, _) = try openSample("Recipes")
        var request = FetchRequest(entityName: "Recipe")
        request.resultType = .dictionary
        request.propertiesToFetch = ["name"]
        request.predicate = try FLPredicate(format: "name == %@", "no such recipe")
        let rows = try context.fetchRows(request)
        #expect(rows.isEmpty && rows.count == 0 && rows.first == nil)
        var iterator = rows.makeIterator()
        #expect(iterator.next() == nil)
    }

    @Test func rowsHoldWhatDictionariesHold() throws {
        let (context, statements, _) = try openSample("Recipes")
        var plain = FetchRequest(entityName: "Recipe")
        plain.resultType = .dictionary
        plain.propertiesToFetch = ["objectID", "name", "prepTime", "type", "type.name"]
        plain.sortDescriptors = [FLSortDescriptor(key: "name")]
        var grouped = FetchRequest(entityName: "Recipe")
        grouped.resultType = .dictionary
        grouped.propertiesToFetch = ["type.name", count("recipes", "name"), function("average:", "prep", "prepTime", .double)]
        grouped.propertiesToGroupBy = ["type.name"]
        grouped.sortDescriptors = [FLSortDescriptor(key: "type.name")]
        var all = FetchRequest(entityName: "Ingredient")
        all.resultType = .dictionary
        var limited = plain
        limited.fetchLimit = 3
        limited.predicate = try FLPredicate(format: "name BEGINSWITH[c] %@", "c")
        for request in [plain, grouped, all, limited] {
            statements.removeAll()
            let dictionaries = try context.fetchDictionaries(request)
            let dictionarySQL = statements.sql
            statements.removeAll()
            let rows = try context.fetchRows(request)
            #expect(statements.sql == dictionarySQL)
            #expect(rows.count == dictionaries.count && !rows.isEmpty)
            #expect(rows.map { described($0.dictionary) } == dictionaries.map(described))
            #expect(rows.dictionaries.map(described) == dictionaries.map(described))
            for (row, dictionary) in zip(rows, dictionaries) {
                #expect(row.keyNames == rows.keyNames)
                for (i, key) in row.keyNames.enumerated() {
                    #expect(row[key].map { "\($0)" } == dictionary[key].map { "\($0)" })
                    #expect(row[i].map { "\($0)" } == dictionary[key].map { "\($0)" })
                }
                #expect(row["no such key"] == nil)
            }
        }
        // Typed reads: the attribute's own type, another type (nil), NULL (nil).
        let rows = try context.fetchRows(plain)
        let first = try #require(rows.first)
        #expect(first["name", as: String.self] == first["name"] as? String)
        #expect(first["name", as: Int64.self] == nil)
        #expect(first["objectID", as: ManagedObjectID.self] == first["objectID"] as? ManagedObjectID)
        let untyped = rows.filter { $0["type"] == nil }
        #expect(untyped.allSatisfy { $0["type", as: ManagedObjectID.self] == nil && $0.dictionary["type"] == nil })
    }
}
