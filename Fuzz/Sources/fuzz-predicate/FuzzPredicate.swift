// Fuzzes the predicate language end to end: the input is a format string.
//
// 1. `FLPredicate(format:)` parses it (a thrown error ends the run for this input).
// 2. The canonical form (`predicateFormat`) must parse again and print identically.
// 3. For each entity of the Inventory sample model the predicate is compiled to SQL and
//    fetched from an in-memory store holding a few objects (errors are fine), and evaluated
//    in memory against every object of that entity (errors are fine).
// Crashes, hangs, leaks of the sanitizer's kind and a failed property are findings.
import Faultline
import Foundation
import FuzzSupport

/// The in-memory store, made once: three locations, three assets, five inventories.
@MainActor
final class Fixture {
    static let shared: Fixture = {
        do { return try Fixture() } catch { FuzzSupport.fail("cannot set up the fixture: \(error)") }
    }()

    let context: ManagedObjectContext
    let entityNames: [String]
    var objects: [String: [ManagedObject]] = [:]

    init() throws {
        let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: FuzzSupport.path("Samples/Inventory/Inventory.xcdatamodeld")))
        context = ManagedObjectContext(coordinator: PersistentStoreCoordinator(store: try SQLiteStore(inMemoryWith: model)))
        entityNames = model.entities.map(\.name).sorted()
        var locations: [ManagedObject] = []
        for label in ["Garage", "Kitchen", "Crème brûlée Ñ"] {
            let location = try context.insertObject(entityName: "Location")
            try location.setValue(label, forKey: "label")
            locations.append(location)
        }
        var assets: [ManagedObject] = []
        for label in ["Drill", "drill bits", ""] {
            let asset = try context.insertObject(entityName: "Asset")
            try asset.setValue(label, forKey: "label")
            assets.append(asset)
        }
        for i in 0..<5 {
            let inventory = try context.insertObject(entityName: "Inventory")
            try inventory.setValue(i == 4 ? nil : i * 7 - 3, forKey: "count")
            try inventory.setValue(i == 3 ? nil : Date(timeIntervalSinceReferenceDate: Double(i) * 86_400 * 40), forKey: "date")
            try inventory.setValue(i == 2 ? nil : assets[i % assets.count], forKey: "asset")
            try inventory.setValue(locations[i % locations.count], forKey: "location")
        }
        try context.save()
        for name in entityNames {
            objects[name] = Array(try context.fetch(FetchRequest(entityName: name)))
        }
    }

    func run(_ predicate: FLPredicate) {
        for name in entityNames {
            var request = FetchRequest(entityName: name)
            request.predicate = predicate
            _ = try? context.fetch(request)
            for object in objects[name] ?? [] {
                _ = try? predicate.evaluate(with: object)
            }
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPredicate(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let format = FuzzSupport.text(start, count)
    guard let predicate = try? FLPredicate(format: format) else { return 0 }
    let canonical = predicate.predicateFormat
    let reparsed: FLPredicate
    do {
        reparsed = try FLPredicate(format: canonical)
    } catch {
        FuzzSupport.fail("the canonical form does not parse: \(canonical.debugDescription) (\(error)); input \(format.debugDescription)")
    }
    let again = reparsed.predicateFormat
    if again != canonical || reparsed != predicate {
        FuzzSupport.fail("printing is not stable: \(canonical.debugDescription) → \(again.debugDescription); input \(format.debugDescription)")
    }
    MainActor.assumeIsolated { Fixture.shared.run(predicate) }
    return 0
}

@main
enum Main {
    static func main() { FuzzSupport.runFuzzer(fuzzPredicate) }
}
