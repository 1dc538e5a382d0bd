// The round trip of generated classes (Tests/FaultlineCodegenTests/CompiledClassTests.swift):
// compiled as `main.swift` with a model's generated classes and a `GeneratedClasses.swift` the
// test writes (the classes, and `KeyPathListing` conformances for the root classes).
//
//   roundtrip STORE MODEL   (MODEL `-`: the model the store caches)
//
// Opens STORE with the classes registered; checks that every object is an instance of its
// entity's class and that every typed property reads what value(forKey:) reads; changes every
// writable attribute of the first valid object of each entity through its typed setter; saves;
// reads the changed values back through a new coordinator. Prints the mismatches and a summary
// line (`classes N objects N values N defaulted N changed N problems N`); exit status 0 when
// there is no problem, 1 when there are, 2 on an error.

import Faultline
import Foundation

/// The generated classes whose key path table the round trip reads (every generated class has it).
protocol KeyPathListing: ManagedObjectSubclass {
    static var propertyNamesByKeyPath: [AnyKeyPath: String] { get }
}

/// A value as text to compare: optionals unwrapped, objects as their IDs, sets sorted.
func canonical(_ value: Any?, asSet: Bool = false) -> String {
    guard let value else { return "nil" }
    let mirror = Mirror(reflecting: value)
    if mirror.displayStyle == .optional { return canonical(mirror.children.first?.value, asSet: asSet) }
    switch value {
    case let object as ManagedObject: return object.objectID.uriRepresentation
    case let data as Data: return "data:" + data.base64EncodedString()
    case let date as Date: return "date:\(date.timeIntervalSinceReferenceDate)"
    case let url as URL: return "url:" + url.absoluteString
    default: break
    }
    if mirror.displayStyle == .set || (asSet && mirror.displayStyle == .collection) {
        return "{" + mirror.children.map { canonical($0.value) }.sorted().joined(separator: ",") + "}"
    }
    if mirror.displayStyle == .collection { return "[" + mirror.children.map { canonical($0.value) }.joined(separator: ",") + "]" }
    return "\(value)"
}

/// Typed reads of every object of a class's entity, against value(forKey:).
func check<T: KeyPathListing>(_ type: T.Type, in context: ManagedObjectContext, problems: inout [String]) throws -> (objects: Int, values: Int, defaulted: Int) {
    let request = FetchRequest(entityName: type.entityName)
    var objects = 0, values = 0, defaulted = 0
    for object in try context.fetch(request) where object.entity.name == type.entityName {
        guard let typed = object as? T, Swift.type(of: object) == type else {
            problems.append("\(object.objectID): an instance of \(Swift.type(of: object)), not \(type)")
            continue
        }
        objects += 1
        for (keyPath, name) in type.propertyNamesByKeyPath {
            let value = typed[keyPath: keyPath]
            let read = canonical(value)
            // value(forKey:) gives a to-many relationship as an array, also an unordered one.
            let expected = canonical(object.value(forKey: name), asSet: read.hasPrefix("{"))
            values += 1
            if read == expected { continue }
            // A non-optional property reads its default while the store has no value.
            if expected == "nil", let value, Mirror(reflecting: value).displayStyle != .optional { defaulted += 1; continue }
            problems.append("\(type).\(name) of \(object.objectID.uriRepresentation): typed \(read), value(forKey:) \(expected)")
        }
    }
    return (objects, values, defaulted)
}

/// Changes every writable typed attribute of an object; returns the key paths changed.
func change<T: KeyPathListing>(_ object: T, skipping: Set<String>) -> [AnyKeyPath] {
    var changed: [AnyKeyPath] = []
    for (keyPath, name) in T.propertyNamesByKeyPath.sorted(by: { $0.value < $1.value }) where !skipping.contains(name) {
        func apply<V>(_: V.Type, _ change: (V) -> V) -> Bool {
            guard let writable = keyPath as? ReferenceWritableKeyPath<T, V> else { return false }
            object[keyPath: writable] = change(object[keyPath: writable])
            return true
        }
        let done =
            apply(String.self) { $0 + "·" } || apply(String?.self) { ($0 ?? "") + "·" }
            || apply(Int16.self) { $0 == .max ? 0 : $0 + 1 } || apply(Int16?.self) { ($0 ?? 0) == .max ? 0 : ($0 ?? 0) + 1 }
            || apply(Int32.self) { $0 == .max ? 0 : $0 + 1 } || apply(Int32?.self) { ($0 ?? 0) == .max ? 0 : ($0 ?? 0) + 1 }
            || apply(Int64.self) { $0 == .max ? 0 : $0 + 1 } || apply(Int64?.self) { ($0 ?? 0) == .max ? 0 : ($0 ?? 0) + 1 }
            || apply(Bool.self) { !$0 } || apply(Bool?.self) { !($0 ?? false) }
            || apply(Double.self) { $0 + 1.5 } || apply(Double?.self) { ($0 ?? 0) + 1.5 }
            || apply(Float.self) { $0 + 1.5 } || apply(Float?.self) { ($0 ?? 0) + 1.5 }
            || apply(Decimal.self) { $0 + 1 } || apply(Decimal?.self) { ($0 ?? 0) + 1 }
            || apply(Date.self) { $0.addingTimeInterval(60) } || apply(Date?.self) { ($0 ?? Date(timeIntervalSinceReferenceDate: 0)).addingTimeInterval(60) }
            || apply(Data.self) { $0 + [1] } || apply(Data?.self) { ($0 ?? Data()) + [1] }
            || apply(UUID.self) { _ in UUID() } || apply(UUID?.self) { _ in UUID() }
            || apply(URL?.self) { _ in URL(string: "https://example.com/round-trip") }
        if done { changed.append(keyPath) }
    }
    return changed
}

/// `Driver STORE MODEL|-`: reads, changes, saves, reads back; prints a summary; exit 1 on a mismatch.
func main() throws -> Int32 {
    let arguments = CommandLine.arguments
    let storeURL = URL(fileURLWithPath: arguments[1])
    func open() throws -> ManagedObjectContext {
        let model: ManagedObjectModel
        if arguments[2] == "-" {
            guard let cached = try SQLiteStore.cachedModel(at: storeURL) else { throw CocoaError(.fileReadCorruptFile) }
            model = cached
        } else {
            model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: arguments[2]))
        }
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: storeURL, options: .init(readOnly: false))
        try coordinator.registerClasses(GeneratedClasses.all.map { $0 as any ManagedObjectSubclass.Type })
        return ManagedObjectContext(coordinator: coordinator)
    }
    var problems: [String] = []
    var objects = 0, values = 0, defaulted = 0
    let context = try open()
    for type in GeneratedClasses.all {
        let counts = try check(type, in: context, problems: &problems)
        objects += counts.objects; values += counts.values; defaulted += counts.defaulted
    }
    // Change the first object of each entity through its typed properties, save, read back.
    var expected: [(ManagedObjectID, String, String, AnyKeyPath, any KeyPathListing.Type)] = []
    for type in GeneratedClasses.all {
        func first<T: KeyPathListing>(_ type: T.Type) throws {
            let entity = context.coordinator.model.entity(named: type.entityName)
            var skipping = Set(entity?.uniquenessConstraints.flatMap { $0 } ?? [])
            for attribute in entity?.attributes ?? []
            where attribute.minValueString != nil || attribute.maxValueString != nil
                || attribute.regularExpressionString != nil || !attribute.validationPredicates.isEmpty || attribute.isTransient
            {
                skipping.insert(attribute.name)
            }
            // The first object that is valid as it is (a store may hold objects Core Data would no longer save).
            let candidates = try context.fetch(FetchRequest(entityName: type.entityName)).filter { $0.entity.name == type.entityName }
            guard let object = candidates.first(where: { (try? $0.validateForUpdate()) != nil }) as? T else { return }
            for keyPath in change(object, skipping: skipping) {
                let name = T.propertyNamesByKeyPath[keyPath] ?? "?"
                expected.append((object.objectID, name, canonical(object[keyPath: keyPath] as Any?), keyPath, type))
            }
        }
        try first(type)
    }
    try context.save()
    let reopened = try open()
    for (id, name, value, keyPath, type) in expected {
        func read<T: KeyPathListing>(_: T.Type) -> String? {
            (reopened.object(with: id) as? T).map { canonical($0[keyPath: keyPath] as Any?) }
        }
        let after = read(type) ?? "missing"
        if after != value { problems.append("\(id.uriRepresentation).\(name): saved \(value), read back \(after)") }
    }
    for problem in problems.prefix(50) { print("MISMATCH " + problem) }
    print("classes \(GeneratedClasses.all.count) objects \(objects) values \(values) defaulted \(defaulted) changed \(expected.count) problems \(problems.count)")
    return problems.isEmpty ? 0 : 1
}

do { exit(try main()) } catch {
    print("ERROR \(error)")
    exit(2)
}
