import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Validation on save: every failure reported at once, nothing written.
@Suite struct ValidationTests {
    @Test func validationReportsEveryFailureAndWritesNothing() throws {
        let (context, store, sql) = try SaveModelTests.open()
        let ann = try context.insertObject(entityName: "Person")
        try ann.setValue("a", forKey: "name")
        try ann.setValue(200, forKey: "age")
        let bob = try context.insertObject(entityName: "Person")
        try bob.setValue("Bob", forKey: "name")
        for _ in 0..<3 { try bob.addObject(try context.insertObject(entityName: "Person"), toRelationship: "friends") }
        sql.clear()
        do {
            try context.save()
            Issue.record("invalid objects were saved")
        } catch let error as ObjectValidationError {
            let annFailures = error.failures.filter { $0.objectID == ann.objectID }.map { "\($0.key) \($0.code)" }
            #expect(annFailures == ["age numberTooLarge", "home missingMandatoryProperty", "name stringTooShort", "name stringPatternMatching"])
            #expect(error.failures.contains { $0.objectID == bob.objectID && $0.code == .relationshipExceedsMaximumCount })
            #expect(error.failures.filter { $0.key == "name" && $0.code == .missingMandatoryProperty }.count == 3)  // the three friends
            #expect(error.code == 1560)
            #expect(error.description.contains("Person.age"))
        }
        #expect(sql.sql.isEmpty)
        #expect(try store.connection.scalar("SELECT COUNT(*) FROM ZPERSON") == 0)
    }

    @Test func anOptionalToManyWithOnlyAMaximumIsChecked() throws {
        // Optional, no minimum: only the maximum makes the relationship one validation looks at.
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Shelf", relationships: [
                RelationshipDescription(name: "books", destination: "Book", inverse: "shelf", toMany: true, maxCount: 2)
            ]),
            EntityDescription(name: "Book", relationships: [RelationshipDescription(name: "shelf", destination: "Shelf", inverse: "books")]),
        ])
        let context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: try SQLiteStore(inMemoryWith: model)))
        let shelf = try context.insertObject(entityName: "Shelf")
        let books = try (0..<3).map { _ in try context.insertObject(entityName: "Book") }
        for book in books { try shelf.addObject(book, toRelationship: "books") }
        do {
            try context.save()
            Issue.record("a shelf of three books was saved")
        } catch let error as ObjectValidationError {
            #expect(error.failures.map { "\($0.key) \($0.code)" } == ["books relationshipExceedsMaximumCount"])
        }
        try shelf.removeObject(books[2], fromRelationship: "books")
        try context.save()
        #expect(!context.hasChanges)
    }
}
