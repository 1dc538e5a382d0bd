import Faultline
import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Dictionary, ID and aggregate fetches on Apple's Photos stores (copies), answers checked
/// against SQL written by hand. Golden shapes and their sources: `FetchResultTypeTests.swift`
/// and `Documentation/Fetching.md`.
@Suite(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
struct CorpusFetchValuesTests {
    /// A copy of a Photos store opened with the model it caches, and a read-only connection to it.
    func open(_ name: String) throws -> (ManagedObjectContext, SQLStatements, Connection) {
        let copy = try CorpusStoreCopies.copy("\(name)/Photos.sqlite", corpus: try Corpus.required())
        let store = try SQLiteStore(url: copy)
        let statements = SQLStatements()
        store.connection.addTraceObserver { event in
            if case .statement(let sql, let arguments) = event { statements.append(sql, arguments) }
        }
        return (ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store)), statements, try Connection(path: copy.path, mode: .readOnly))
    }

    @Test(arguments: ["photos-10.15.1", "photos-16.0.0-beta"])
    func albumsGroupedByKindInTheirSharedTable(_ name: String) throws {
        let (context, statements, db) = try open(name)
        var request = FetchRequest(entityName: "Album")
        request.resultType = .dictionary
        request.propertiesToFetch = ["kind", .expression(ExpressionDescription(name: "albums", expression: .function("count:", [.evaluatedObject]), expressionResultType: .integer64))]
        request.propertiesToGroupBy = ["kind"]
        request.sortDescriptors = [FLSortDescriptor(key: "kind")]
        let rows = try context.fetchDictionaries(request)
        // Album has sub-entities: Core Data's range filter on Z_ENT (reference §4).
        #expect(statements.sql == ["SELECT t0.ZKIND, COUNT( t0.Z_PK) FROM ZGENERICALBUM t0 WHERE ( t0.Z_ENT >= ? AND  t0.Z_ENT <= ?) GROUP BY  t0.ZKIND ORDER BY t0.ZKIND"])
        #expect(!rows.isEmpty)
        // By hand: the family of Album read from Z_PRIMARYKEY's Z_SUPER links.
        #expect(answerRows(rows, ["kind", "albums"]) == handRows(db, """
            WITH RECURSIVE family(e) AS (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Album'
              UNION SELECT k.Z_ENT FROM Z_PRIMARYKEY k JOIN family f ON k.Z_SUPER = f.e)
            SELECT ZKIND, count(*) FROM ZGENERICALBUM WHERE Z_ENT IN family GROUP BY ZKIND ORDER BY ZKIND
            """))
    }

    @Test(arguments: ["photos-10.15.1", "photos-16.0.0-beta"])
    func assetsByTypeWithSumMinMaxAndHaving(_ name: String) throws {
        let (context, statements, db) = try open(name)
        var request = FetchRequest(entityName: "Asset")
        request.resultType = .dictionary
        func described(_ name: String, _ function: String, _ key: String, _ type: AttributeType) -> FetchProperty {
            .expression(ExpressionDescription(name: name, expression: .function(function, [.keyPath(key)]), expressionResultType: type))
        }
        request.propertiesToFetch = [
            "uniformTypeIdentifier", described("n", "count:", "uniformTypeIdentifier", .integer64),
            described("width", "sum:", "width", .integer64), described("first", "min:", "dateCreated", .date),
            described("last", "max:", "dateCreated", .date),
        ]
        request.propertiesToGroupBy = ["uniformTypeIdentifier"]
        request.havingPredicate = try FLPredicate(format: "$n >= 1")
        request.sortDescriptors = [FLSortDescriptor(key: "uniformTypeIdentifier")]
        let rows = try context.fetchDictionaries(request)
        #expect(statements.sql.count == 1)
        #expect(statements.sql.first?.hasPrefix("SELECT t0.ZUNIFORMTYPEIDENTIFIER, COUNT( t0.ZUNIFORMTYPEIDENTIFIER) AS __var0, total( t0.ZWIDTH), MIN( t0.ZDATECREATED), MAX( t0.ZDATECREATED) FROM ") == true)
        #expect(statements.sql.first?.hasSuffix(" GROUP BY  t0.ZUNIFORMTYPEIDENTIFIER HAVING __var0 >= ? ORDER BY t0.ZUNIFORMTYPEIDENTIFIER") == true)
        let table = try #require(statements.sql.first?.split(separator: " ").drop { $0 != "FROM" }.dropFirst().first.map(String.init))
        let hand = handRows(db, "SELECT ZUNIFORMTYPEIDENTIFIER, count(ZUNIFORMTYPEIDENTIFIER), total(ZWIDTH), min(ZDATECREATED), max(ZDATECREATED) FROM \(table) "
            + (statements.sql.first?.contains("Z_ENT") == true ? "WHERE Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Asset') " : "")
            + "GROUP BY ZUNIFORMTYPEIDENTIFIER HAVING count(ZUNIFORMTYPEIDENTIFIER) >= 1 ORDER BY ZUNIFORMTYPEIDENTIFIER")
        #expect(!rows.isEmpty)
        #expect(answerRows(rows, ["uniformTypeIdentifier", "n", "width", "first", "last"]) == hand)
    }

    @Test(arguments: ["photos-10.15.1", "photos-16.0.0-beta"])
    func idsOfASubEntitySelectItsEntityColumn(_ name: String) throws {
        let (context, statements, db) = try open(name)
        var request = FetchRequest(entityName: "GenericAlbum")
        request.resultType = .managedObjectID
        request.includesPropertyValues = false
        request.sortDescriptors = [FLSortDescriptor(key: "objectID")]
        let ids = try context.fetchObjectIDs(request)
        // L-FAULT's shape: an entity sharing its table selects t0.Z_ENT first.
        #expect(statements.sql == ["SELECT t0.Z_ENT, t0.Z_PK FROM ZGENERICALBUM t0 ORDER BY t0.Z_PK"])
        let hand = handRows(db, "SELECT k.Z_NAME, a.Z_PK FROM ZGENERICALBUM a JOIN Z_PRIMARYKEY k ON k.Z_ENT = a.Z_ENT ORDER BY a.Z_PK")
        #expect(ids.map { ["\"\($0.entityName)\"", String($0.primaryKey)] } == hand)
    }
}
