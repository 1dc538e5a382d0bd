import Faultline
import FaultlineModel
import FaultlinePredicate
import FaultlineTestSupport
import Foundation
import Testing

/// Strings compared with Date, UUID and URI attributes: converted on request (the shell
/// always asks), refused by the SQL store otherwise, never bound as text against a number.
@Suite struct TypedLiteralTests {
    static func context() throws -> ManagedObjectContext {
        try SaveTests.open(try SaveTests.copyOfInventory(), readOnly: true).0
    }

    static func count(_ format: String, in context: ManagedObjectContext, entity: String = "Inventory") throws -> Int {
        var request = FetchRequest(entityName: entity)
        let model = context.coordinator.model
        request.predicate = try FLPredicate(format: format).convertingStringLiterals(for: try #require(model.entity(named: entity)), in: model)
        return try context.count(for: request)
    }

    @Test func isoDatesCompareAsDates() throws {
        let context = try Self.context()
        // Dates in the sample: 2 on 2026-11-02, 2 on 2026-11-09, 3 on 2026-11-16, one nil.
        #expect(try Self.count(#"date > "2026-11-05T00:00:00Z""#, in: context) == 5)
        #expect(try Self.count(#"date > "2026-11-05""#, in: context) == 5)
        #expect(try Self.count(#"date >= "2026-11-09T15:00:00+01:00""#, in: context) == 5)
        #expect(try Self.count(#"date < "2026-11-09T14:00""#, in: context) == 2)
        #expect(try Self.count(#"date BETWEEN {"2026-11-01", "2026-11-10"}"#, in: context) == 4)
        #expect(try Self.count(#"date IN {"2026-11-16T18:45:30.5Z", "2026-11-02T09:30:00Z"}"#, in: context) == 5)
        #expect(try Self.count(#"ANY inventories.date > "2026-11-10""#, in: context, entity: "Location") == 2)
        #expect(try Self.count(#"date > CAST("2026-11-05T00:00:00Z", "NSDate")"#, in: context) == 5)
        #expect(try Self.count("date < now()", in: context) == 7)
    }

    @Test func aStringThatIsNotADateNamesTheKeyPathAndTheForm() throws {
        let context = try Self.context()
        let error = #expect(throws: PredicateSQLError.self) { try Self.count(#"date > "2026-13-01""#, in: context) }
        #expect(error?.message.hasPrefix("date is a Date: \"2026-13-01\" is not an ISO 8601 date") == true)
        #expect(throws: PredicateSQLError.self) { try Self.count(#"inventories.date > "soon""#, in: context, entity: "Location") }
        #expect(throws: PredicateSyntaxError.self) { try FLPredicate(format: #"date > CAST("2026-02-30", "NSDate")"#) }
    }

    @Test func theStoreRefusesAnUnconvertedStringAgainstADate() throws {
        let context = try Self.context()
        var request = FetchRequest(entityName: "Inventory")
        request.predicate = try FLPredicate(format: #"date > "2026-11-05T00:00:00Z""#)
        do {
            _ = try context.count(for: request)
            Issue.record("a string was bound against a Date column")
        } catch {
            #expect("\(error)".contains("a Date attribute cannot be compared with the string"))
        }
    }

    @Test func theDateReaderAcceptsTheFormsPeopleTypeAndNoOthers() {
        let utc = { (s: String) in FLDateLiteral.parse(s)?.timeIntervalSinceReferenceDate }
        #expect(utc("2001-01-01") == 0)
        #expect(utc("2001-01-01T00:00:01Z") == 1)
        #expect(utc("2001-01-01 00:00:01.25") == 1.25)
        #expect(utc("2001-01-01T01:00:00+01:00") == 0)
        #expect(utc("2001-01-01T01:00:00+0100") == 0)
        #expect(utc("2000-12-31T19:00-05") == 0)
        for bad in ["", "2001", "2001-1-1", "2001-02-29", "2001-01-01T24:00", "2001-01-01T", "2001-01-01Z", "01/01/2001", "2001-01-01T00:00:00+1"] {
            #expect(FLDateLiteral.parse(bad) == nil, "\(bad)")
        }
    }
}

/// Key paths that are too long, or fan out through to-many relationships without end.
@Suite struct KeyPathLimitTests {
    @Test func keyPathsAreBoundedInLengthAndInObjectsVisited() throws {
        let context = try TypedLiteralTests.context()
        let laptop = try #require(try context.fetch(FetchRequest(entityName: "Asset")).first)
        #expect(laptop.value(forKeyPath: "inventories.count") != nil)
        let long = Array(repeating: "inventories.asset", count: 60).joined(separator: ".")
        #expect(laptop.value(forKeyPath: long) == nil)
        #expect(throws: KeyPathError.self) { try laptop.value(forKeyPath: long, visiting: .max) }
        let fanning = Array(repeating: "inventories.asset", count: 20).joined(separator: ".")
        let error = #expect(throws: KeyPathError.self) { try laptop.value(forKeyPath: fanning, visiting: 1_000) }
        #expect(error?.message == "\(fanning) reaches more than 1000 objects")
        #expect(throws: PredicateEvaluationError.self) { try FLExpression.keyPath(long).value(with: ["inventories": []]) }
    }
}

/// Key-value coding's collection operators in `ManagedObject.value(forKeyPath:)`.
@Suite struct KeyPathCollectionOperatorTests {
    @Test func operatorsAggregateTheCollectionReachedSoFar() throws {
        let context = try TypedLiteralTests.context()
        var request = FetchRequest(entityName: "Asset")
        request.predicate = try FLPredicate(format: "label == 'Coffee Mug'")
        let mug = try #require(try context.fetch(request).first)
        #expect(try mug.value(forKeyPath: "inventories.@count", visiting: .max) as? Int == 2)
        #expect(try mug.value(forKeyPath: "inventories.@sum.count", visiting: .max) as? Int == 16)
        #expect(try mug.value(forKeyPath: "inventories.@avg.count", visiting: .max) as? Double == 8)
        // @min and @max give the value itself, of the attribute's type (Integer 16).
        #expect(try mug.value(forKeyPath: "inventories.@min.count", visiting: .max).map { "\($0)" } == "4")
        #expect(try mug.value(forKeyPath: "inventories.@max.count", visiting: .max).map { "\($0)" } == "12")
        // Through a to-many, one key at a time: the operator sees every location reached.
        #expect(try mug.value(forKeyPath: "inventories.location.@count", visiting: .max) as? Int == 2)
        let labels = try #require(try mug.value(forKeyPath: "inventories.location.@distinctUnionOfObjects.label", visiting: .max) as? [Any?])
        #expect(Set(labels.compactMap { $0 as? String }) == ["Jaye's Basement", "Office"])
        // A to-one then a to-many.
        let inventory = try #require((mug.value(forKey: "inventories") as? [ManagedObject])?.first)
        #expect(try inventory.value(forKeyPath: "asset.inventories.@count", visiting: .max) as? Int == 2)
        // Misplaced and unknown operators say so; the non-throwing form gives nil.
        let single = #expect(throws: KeyPathError.self) { try mug.value(forKeyPath: "label.@count", visiting: .max) }
        #expect(single?.message == "label.@count: @count needs a to-many relationship before it, not a single value")
        let unknown = #expect(throws: KeyPathError.self) { try mug.value(forKeyPath: "inventories.@median.count", visiting: .max) }
        #expect(unknown?.message.hasPrefix("inventories.@median.count: unknown collection operator @median") == true)
        let notNumbers = #expect(throws: KeyPathError.self) { try mug.value(forKeyPath: "inventories.location.@sum.label", visiting: .max) }
        #expect(notNumbers?.message.hasPrefix("inventories.location.@sum.label: sum needs numbers") == true, "\(notNumbers?.message ?? "")")
        #expect(mug.value(forKeyPath: "inventories.@count.count") == nil)
    }
}
