import Faultline
import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// `MATCHES` through the store (SQLite calls `NSCoreDataMatches`) and through validation:
/// a pattern is decided, or the fetch, count or save fails saying so; never a silent 0.
@Suite struct RegexStoreTests {
    static let label = String(repeating: "a", count: 30) + "b"

    /// A copy of the Inventory store with a Location labelled 30 `a`s and a `b`.
    static func storeWithTheLabel() throws -> (URL, ManagedObjectContext) {
        let folder = try TestSupport.temporaryDirectory("faultline-regex")
        let url = folder.appendingPathComponent("Inventory.sqlite")
        try FileManager.default.copyItem(at: TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite"), to: url)
        let model = try ManagedObjectModel(contentsOf: TestSupport.inventoryFolder.appendingPathComponent("Inventory.xcdatamodeld"))
        let context = ManagedObjectContext(coordinator: try PersistentStoreCoordinator(model: model, storeURL: url, options: .init(readOnly: false)))
        let location = try context.insertObject(entityName: "Location")
        try location.setValue(label, forKey: "label")
        try context.save()
        return (url, context)
    }

    static func request(_ format: String, _ pattern: String) throws -> FetchRequest {
        var request = FetchRequest(entityName: "Location")
        request.predicate = try FLPredicate(format: format, arguments: [pattern])
        return request
    }

    @Test func theDefectsCountIsOne() throws {
        let (_, context) = try Self.storeWithTheLabel()
        let start = Date()
        #expect(try context.count(for: Self.request("label MATCHES %@", "(a+)+c|a*b")) == 1)
        #expect(try context.fetch(Self.request("label MATCHES[c] %@", "(A+)+C|A*B")).map { $0.value(forKey: "label") as? String } == [Self.label])
        #expect(try context.count(for: Self.request("label MATCHES %@", "[A-Z].*")) == 3)  // the sample's three labels
        #expect(Date().timeIntervalSince(start) < 2)
    }

    @Test func anUndecidablePatternFailsTheCountAndTheFetch() throws {
        let (_, context) = try Self.storeWithTheLabel()
        let pattern = "(a+)+c|(x)\\2"  // a backreference: ICU's engine, which gives up on the label
        for run in [{ _ = try context.count(for: Self.request("label MATCHES %@", pattern)) },
                    { _ = try context.fetch(Self.request("label MATCHES %@", pattern)) }] {
            #expect {
                try run()
            } throws: { error in
                "\(error)".contains("MATCHES could not decide") && "\(error)".contains(pattern)
            }
        }
        // The same pattern decides the sample's other labels.
        #expect(try context.count(for: Self.request("label MATCHES %@", "(G)arage|(x)\\2")) == 1)
    }

    @Test func theSQLFunctionRaisesTheError() throws {
        let connection = try Connection(path: ":memory:", mode: .readWrite)
        try CoreDataFunctions.register(on: connection)
        #expect(try connection.scalar("SELECT NSCoreDataMatches(?, ?, 0)", [.text(Self.label), .text("(a+)+c|a*b")]) == 1)
        #expect {
            try connection.scalar("SELECT NSCoreDataMatches(?, ?, 0)", [.text(Self.label), .text("(a+)+c|(x)\\2")])
        } throws: { error in
            "\(error)".contains("MATCHES could not decide")
        }
        #expect {
            try connection.scalar("SELECT NSCoreDataMatches(?, ?, 0)", [.text("a"), .text("(")])
        } throws: { error in
            "\(error)".contains("invalid regular expression")
        }
    }

    @Test func validationUsesTheSameEngineAndSaysWhenItCannotDecide() throws {
        func model(_ pattern: String) throws -> ManagedObjectModel {
            try ManagedObjectModel(entities: [
                EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "name", type: .string, regularExpressionString: pattern)])
            ])
        }
        func save(_ pattern: String, _ value: String) throws -> [String] {
            let store = try SQLiteStore(inMemoryWith: try model(pattern))
            let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: store))
            try context.insertObject(entityName: "Tag").setValue(value, forKey: "name")
            do {
                try context.save()
                return []
            } catch let error as ObjectValidationError {
                return error.failures.map(\.message)
            }
        }
        #expect(try save("(a+)+c|a*b", Self.label) == [])
        #expect(try save("(a+)+c|a*b", "ab!") == ["name \"ab!\" does not match the pattern (a+)+c|a*b"])
        // A whole-string match, as MATCHES: a final newline is not ignored.
        #expect(try save("[a-z]+", "abc\n").count == 1)
        let undecided = try save("(a+)+c|(x)\\2", Self.label)
        #expect(undecided.count == 1 && undecided[0].contains("could not be checked") && undecided[0].contains("MATCHES could not decide"))
        let invalid = try save("(", "x")
        #expect(invalid.count == 1 && invalid[0].contains("invalid regular expression"))
    }
}
