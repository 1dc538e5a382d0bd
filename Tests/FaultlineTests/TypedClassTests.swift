import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

// Hand-written classes for the Inventory sample, in the shape `faultline generate` writes.

final class InventoryAsset: ManagedObject, ManagedObjectSubclass {
    class var entityName: String { "Asset" }
    class var managedProperties: [ManagedPropertyDeclaration] {
        [.attribute("label", .string), .toMany("inventories", InventoryItem.self)]
    }
    var label: String? {
        get { attributeValue(at: 0, named: "label") }
        set { setAttributeValue(newValue, at: 0, named: "label") }
    }
    var inventories: Set<InventoryItem> {
        get { Set(toManyValue(at: 1, named: "inventories") as [InventoryItem]) }
        set { setToManyValue(Array(newValue), at: 1, named: "inventories") }
    }
    func addToInventories(_ value: InventoryItem) { addToManyValues([value], at: 1, named: "inventories") }
    func removeFromInventories(_ value: InventoryItem) { removeToManyValues([value], at: 1, named: "inventories") }

    // Lifecycle, recorded for the tests.
    nonisolated(unsafe) static var events: [String] = []
    override func awakeFromInsert() { Self.events.append("awakeFromInsert"); label = "new" }
    override func awakeFromFetch() { Self.events.append("awakeFromFetch \(label ?? "nil")") }
    override func willSave() { Self.events.append("willSave \(label ?? "nil")") }
    override func didSave() { Self.events.append("didSave") }
    override func prepareForDeletion() { Self.events.append("prepareForDeletion \(label ?? "nil")") }
    override func willTurnIntoFault() { Self.events.append("willTurnIntoFault") }
    override func didTurnIntoFault() { Self.events.append("didTurnIntoFault \(isFault)") }

    struct LabelError: Error, CustomStringConvertible {
        var description: String { "labels cannot be \"forbidden\"" }
    }
    override func validateValue(_ value: inout Any?, forKey key: String) throws {
        guard key == "label", let text = value as? String else { return }
        if text == "forbidden" { throw LabelError() }
        value = text.trimmingCharacters(in: .whitespaces)  // replaced values are set on the object
    }
}

final class InventoryItem: ManagedObject, ManagedObjectSubclass {
    class var entityName: String { "Inventory" }
    class var managedProperties: [ManagedPropertyDeclaration] {
        [.attribute("count", .integer16), .attribute("date", .date), .toOne("asset", InventoryAsset.self), .toOne("location", InventoryLocation.self)]
    }
    var count: Int16 {
        get { attributeValue(at: 0, named: "count") ?? 0 }
        set { setAttributeValue(newValue, at: 0, named: "count") }
    }
    var date: Date? {
        get { attributeValue(at: 1, named: "date") }
        set { setAttributeValue(newValue, at: 1, named: "date") }
    }
    var asset: InventoryAsset? {
        get { toOneValue(at: 2, named: "asset") }
        set { setToOneValue(newValue, at: 2, named: "asset") }
    }
    var location: InventoryLocation? {
        get { toOneValue(at: 3, named: "location") }
        set { setToOneValue(newValue, at: 3, named: "location") }
    }
}

final class InventoryLocation: ManagedObject, ManagedObjectSubclass {
    class var entityName: String { "Location" }
    class var managedProperties: [ManagedPropertyDeclaration] {
        [.attribute("label", .string), .toMany("inventories", InventoryItem.self)]
    }
    var label: String? {
        get { attributeValue(at: 0, named: "label") }
        set { setAttributeValue(newValue, at: 0, named: "label") }
    }
}

/// A class for a parent entity (`Animal`, whose sub-entity `Dog` adds `barks`), for objects
/// whose row turns out to be a sub-entity's.
final class ZooAnimal: ManagedObject, ManagedObjectSubclass {
    class var entityName: String { "Animal" }
    class var managedProperties: [ManagedPropertyDeclaration] { [.attribute("name", .string)] }
    var name: String? {
        get { attributeValue(at: 0, named: "name") }
        set { setAttributeValue(newValue, at: 0, named: "name") }
    }
}

/// An inventory class whose awakeFromFetch() moves the object out of its location (a change
/// the context records), for the undo step of a typed setter that fires the fault.
final class RelocatingInventoryItem: ManagedObject, ManagedObjectSubclass {
    class var entityName: String { "Inventory" }
    class var managedProperties: [ManagedPropertyDeclaration] { [.attribute("count", .integer16)] }
    var count: Int16 {
        get { attributeValue(at: 0, named: "count") ?? 0 }
        set { setAttributeValue(newValue, at: 0, named: "count") }
    }
    override func awakeFromFetch() { try? setValue(nil, forKey: "location") }
}

/// A class declaring a property with the wrong type, for registration errors.
final class WrongAsset: ManagedObject, ManagedObjectSubclass {
    class var entityName: String { "Asset" }
    class var managedProperties: [ManagedPropertyDeclaration] {
        [.attribute("label", .integer64), .attribute("colour", .string), .toOne("inventories", InventoryItem.self)]
    }
}

/// Registered classes: objects of their entities are their instances everywhere, typed
/// properties go through the same change tracking as key-value coding, lifecycle methods run
/// when Core Data runs them.
@Suite(.serialized) struct TypedClassTests {
    static let classes: [any ManagedObjectSubclass.Type] = [InventoryAsset.self, InventoryItem.self, InventoryLocation.self]

    static func open(register: Bool = true) throws -> (ManagedObjectContext, Recorder, URL) {
        let url = try SaveTests.copyOfInventory()
        let model = try ManagedObjectModel(contentsOf: SaveTests.modelURL)
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: url, options: .init(readOnly: false))
        if register { try coordinator.registerClasses(classes) }
        let recorder = Recorder()
        coordinator.store.connection.addTraceObserver { event in
            if case .statement(let sql, let arguments) = event { recorder.append(sql, arguments) }
        }
        return (ManagedObjectContext(coordinator: coordinator), recorder, url)
    }

    @Test func contextsMakeInstancesOfRegisteredClasses() throws {
        let (context, _, _) = try Self.open()
        let assets = try InventoryAsset.fetch(InventoryAsset.fetchRequest(), in: context)
        #expect(!assets.isEmpty)
        let bike = try #require(assets.first { $0.label == "Bicycle" })
        // Relationship faults, inserts and child contexts make the classes too.
        let items = bike.inventories
        #expect(!items.isEmpty)
        #expect(items.allSatisfy { $0.asset === bike })
        #expect(items.compactMap(\.location).allSatisfy { type(of: $0) == InventoryLocation.self })
        let inserted = try context.insertObject(entityName: "Inventory")
        #expect(inserted is InventoryItem)
        let child = ManagedObjectContext(parent: context)
        #expect(child.object(with: bike.objectID) is InventoryAsset)
        #expect(context.coordinator.registeredClass(forEntityName: "Location") == InventoryLocation.self)
    }

    @Test func typedGettersOfAPartiallyFetchedObjectLoadTheRest() throws {
        let (context, sql, _) = try Self.open()
        let full = try #require(try ManagedObjectContext(coordinator: context.coordinator).fetch(FetchRequest(entityName: "Inventory")).first as? InventoryItem)
        let (count, date) = (full.count, try #require(full.date))
        var request = FetchRequest(entityName: "Inventory")
        request.propertiesToFetch = ["count"]
        let item = try #require(try context.fetch(request).first { $0.objectID == full.objectID } as? InventoryItem)
        sql.clear()
        #expect(item.count == count)
        #expect(sql.sql.isEmpty)  // a fetched property: read from the row
        #expect(item.date == date)  // not fetched: the rest of the row is loaded, not nil read
        #expect(sql.sql.count == 1)
    }

    @Test func typedGettersAreCheckedUnderTheConcurrencyDebugCheck() throws {
        let (plain, _, _) = try Self.open()
        let context = ManagedObjectContext(coordinator: plain.coordinator, concurrencyType: .privateQueue)
        context.concurrencyDebug = true
        let violations = Violations()
        context.concurrencyViolationHandler = { violations.append($0) }
        let item = try #require(try context.performAndWait { try context.fetch(FetchRequest(entityName: "Inventory")).first } as? InventoryItem)
        let count = context.performAndWait { item.count }
        #expect(violations.all.isEmpty)
        #expect(item.count == count)  // off the queue: read, and reported
        #expect(violations.all.count == 1)
    }

    @Test func typedAccessorsOfAParentFaultFilledWithASubentitysRowGoByKey() throws {
        let store = try SQLiteStore(inMemoryWith: try SaveModelTests.model())
        let coordinator = PersistentStoreCoordinator(store: store)
        try coordinator.registerClasses([ZooAnimal.self])
        let writer = ManagedObjectContext(coordinator: coordinator)
        let dog = try writer.insertObject(entityName: "Dog")
        try dog.setValue("Rex", forKey: "name")
        try dog.setValue(true, forKey: "barks")
        try writer.save()
        let id = ManagedObjectID(entityName: "Animal", storeIdentifier: store.identifier, primaryKey: dog.objectID.primaryKey)
        // Read: the fault fires with the Dog row, whose layout puts `barks` before `name`.
        let reader = ManagedObjectContext(coordinator: coordinator)
        let animal = try #require(reader.object(with: id) as? ZooAnimal)
        #expect(animal.isFault)
        #expect(animal.name == "Rex")
        #expect(animal.name == animal.value(forKey: "name") as? String)
        // Write through a fault: the name changes, not the slot the class's table names.
        let changer = ManagedObjectContext(coordinator: coordinator)
        let renamed = try #require(changer.object(with: id) as? ZooAnimal)
        renamed.name = "Max"
        #expect(renamed.value(forKey: "name") as? String == "Max")
        #expect(renamed.value(forKey: "barks") as? Bool == true)
        try changer.save()
        let check = try ManagedObjectContext(coordinator: coordinator).existingObject(with: dog.objectID)
        #expect(check.value(forKey: "name") as? String == "Max" && check.value(forKey: "barks") as? Bool == true)
        // A loaded object whose row was a sub-entity's: typed reads and writes go by key too.
        renamed.name = "Rex"
        #expect(renamed.name == "Rex" && renamed.value(forKey: "barks") as? Bool == true)
    }

    @Test func aTypedSetterThatFiresTheFaultIsOneUndoStepWithWhatTheFaultChanged() throws {
        let (plain, _, url) = try Self.open(register: false)
        let located = try #require(try plain.fetch(FetchRequest(entityName: "Inventory")).first { $0.value(forKey: "location") != nil })
        let coordinator = try PersistentStoreCoordinator(model: try ManagedObjectModel(contentsOf: SaveTests.modelURL), storeURL: url, options: .init(readOnly: false))
        try coordinator.registerClasses([RelocatingInventoryItem.self])
        let id = ManagedObjectID(entityName: "Inventory", storeIdentifier: coordinator.store.identifier, primaryKey: located.objectID.primaryKey)
        let context = ManagedObjectContext(coordinator: coordinator)
        let item = try #require(context.object(with: id) as? RelocatingInventoryItem)
        #expect(item.isFault)
        item.count = 77  // fires the fault: awakeFromFetch() moves it out of its location
        #expect(item.count == 77 && item.value(forKey: "location") == nil)
        context.undo()  // the change and the fault's own, as one step
        #expect(item.value(forKey: "location") != nil)
        #expect(!context.canUndo)
    }

    @Test func typedPropertiesChangeTrackUndoAndSaveLikeKeyValueCoding() throws {
        let (context, sql, url) = try Self.open()
        let item = try #require(try InventoryItem.fetch(InventoryItem.fetchRequest(), in: context).first)
        let before = item.count
        item.count = before + 5
        #expect(item.isUpdated && item.value(forKey: "count") as? Int16 == before + 5)
        #expect(item.changedValues()["count"] as? Int16 == before + 5)
        context.undo()
        #expect(item.count == before && !item.hasChanges)
        context.redo()
        #expect(item.count == before + 5)
        // Relationships keep their inverses.
        let location = try #require(try InventoryLocation.fetch(InventoryLocation.fetchRequest(), in: context).first { $0 !== item.location })
        item.location = location
        #expect(location.value(forKey: "inventories") as? [ManagedObject] ?? [] == [item] || (location.value(forKey: "inventories") as? [ManagedObject])?.contains(item) == true)
        sql.clear()
        try context.save()
        #expect(sql.sql.contains { $0.hasPrefix("UPDATE ZINVENTORY SET ZCOUNT = ?, ZLOCATION = ?, Z_OPT = ?") })
        let raw = try Connection(path: url.path, mode: .readOnly)
        #expect(try raw.scalar("SELECT ZCOUNT FROM ZINVENTORY WHERE Z_PK = \(item.objectID.primaryKey)") == .integer(Int64(before + 5)))
    }

    /// With undo off, a typed setter on the object the context's last change was to writes
    /// the value without the context; everything the context's way does still holds: the
    /// change is counted and saved, announced once per event, noted again after an
    /// announcement, and an unchanged value is no change.
    @Test func typedSettersWithoutUndoTrackChangesAsTheContextDoes() throws {
        let (context, sql, url) = try Self.open()
        context.isUndoEnabled = false
        let log = NotificationLog(context)
        let item = try InventoryItem(context: context)
        item.count = 3  // the object the last change was to: the setters below take the short way
        item.date = Date(timeIntervalSinceReferenceDate: 1_000)
        item.count = 4
        #expect(context.insertedObjects == [item] && item.count == 4)
        try context.processPendingChanges()
        #expect(log.changes == [ContextChange(kind: .objectsDidChange, inserted: [item.objectID])])
        try context.save()
        let key = item.objectID.primaryKey
        #expect(sql.sql.contains { $0.hasPrefix("INSERT INTO ZINVENTORY") })

        // A saved object: its first change goes through the context (noted, touched), the
        // next ones do not; an announcement makes the next change noted again.
        log.clear()
        item.count = 5
        item.count = 5  // the same value: no change
        item.date = Date(timeIntervalSinceReferenceDate: 2_000)
        #expect(context.updatedObjects == [item] && context.hasChanges)
        try context.processPendingChanges()
        item.count = 6
        try context.processPendingChanges()
        #expect(log.changes == [ContextChange(kind: .objectsDidChange, updated: [item.objectID]), ContextChange(kind: .objectsDidChange, updated: [item.objectID])])
        try context.save()
        let raw = try Connection(path: url.path, mode: .readOnly)
        let row = try raw.query("SELECT ZCOUNT, ZDATE FROM ZINVENTORY WHERE Z_PK = ?", [.integer(key)]).first?.values
        #expect(row == [6, 2_000])  // a whole number of seconds: stored as an integer (NUMERIC affinity)

        // Undo on: each setter is an undo step of its own, as through the context.
        context.isUndoEnabled = true
        item.count = 7
        item.count = 8
        context.undo()
        #expect(item.count == 7)
    }

    /// An object outliving its context keeps taking values (in itself, as an object in no
    /// context does), also the object the context's last change was to.
    @Test func typedSettersOfAnObjectWhoseContextIsGone() throws {
        var context: ManagedObjectContext? = try Self.open().0
        context?.isUndoEnabled = false
        let item = try InventoryItem(context: try #require(context))
        item.count = 1
        context = nil
        #expect(item.managedObjectContext == nil)
        item.count = 2
        item.date = Date(timeIntervalSinceReferenceDate: 5)
        #expect(item.count == 2 && item.date == Date(timeIntervalSinceReferenceDate: 5))
    }

    @Test func insertThroughTheClass() throws {
        let (context, _, _) = try Self.open()
        InventoryAsset.events = []
        let asset = try InventoryAsset(context: context)
        #expect(asset.objectID.isTemporaryID && asset.isInserted)
        #expect(asset.label == "new")  // set by awakeFromInsert
        let item = try InventoryItem(context: context)
        #expect(item.count == 0)  // the model's default
        asset.addToInventories(item)
        #expect(item.asset === asset && asset.inventories == [item])
        asset.removeFromInventories(item)
        #expect(item.asset == nil)
        #expect(InventoryAsset.events == ["awakeFromInsert"])
    }

    @Test func lifecycleMethodsRunWhenCoreDataRunsThem() throws {
        let (context, _, _) = try Self.open()
        InventoryAsset.events = []
        let bike = try #require(try InventoryAsset.fetch(InventoryAsset.fetchRequest(), in: context).first { $0.label == "Bicycle" })
        #expect(InventoryAsset.events.contains("awakeFromFetch Bicycle"))
        #expect(!bike.hasChanges)
        InventoryAsset.events = []
        bike.label = "Road bike"
        try context.save()
        #expect(InventoryAsset.events == ["willSave Road bike", "didSave"])
        InventoryAsset.events = []
        context.refresh(bike, mergeChanges: false)
        #expect(InventoryAsset.events == ["willTurnIntoFault", "didTurnIntoFault true"])
        InventoryAsset.events = []
        context.delete(bike)
        try context.save()
        #expect(InventoryAsset.events.first == "awakeFromFetch Road bike")
        #expect(Array(InventoryAsset.events.dropFirst()) == ["prepareForDeletion Road bike", "willSave Road bike", "didSave"])
    }

    @Test func awakeFromFetchChangesDoNotDirtyTheObject() throws {
        final class Probe: ManagedObject, ManagedObjectSubclass {
            class var entityName: String { "Location" }
            class var managedProperties: [ManagedPropertyDeclaration] { [.attribute("label", .string)] }
            override func awakeFromFetch() { setAttributeValue("awake", at: 0, named: "label") }
        }
        let url = try SaveTests.copyOfInventory()
        let coordinator = try PersistentStoreCoordinator(model: try ManagedObjectModel(contentsOf: SaveTests.modelURL), storeURL: url)
        try coordinator.registerClasses([Probe.self])
        let context = ManagedObjectContext(coordinator: coordinator)
        let probe = try #require(try Probe.fetch(Probe.fetchRequest(), in: context).first)
        #expect(probe.value(forKey: "label") as? String == "awake")
        #expect(!probe.hasChanges && !context.hasChanges)
    }

    /// An object a lifecycle method of an earlier row of the same fetch registered (here a
    /// fault reached from `awakeFromFetch`, in a fresh context) is the one the fetch returns
    /// for its row, filled from it: uniquing holds inside one page too. So with a batch size,
    /// where a batch's objects are all registered before any is awoken.
    @Test(arguments: [0, 2]) func anObjectAnEarlierRowRegisteredIsTheOneTheFetchReturns(batchSize: Int) throws {
        final class Node: ManagedObject, ManagedObjectSubclass {
            class var entityName: String { "Node" }
            class var managedProperties: [ManagedPropertyDeclaration] { [.attribute("name", .string), .toOne("next", Node.self)] }
            var name: String? { attributeValue(at: 0, named: "name") }
            var next: Node? { toOneValue(at: 1, named: "next") }
            /// The object `next` was when this one awoke.
            var nextWhenAwoken: Node?
            override func awakeFromFetch() { nextWhenAwoken = next }
        }
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Node", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
                RelationshipDescription(name: "next", destination: "Node", inverse: "previous"),
                RelationshipDescription(name: "previous", destination: "Node", inverse: "next"),
            ])
        ])
        let coordinator = PersistentStoreCoordinator(store: try SQLiteStore(inMemoryWith: model))
        try coordinator.registerClasses([Node.self])
        let writer = ManagedObjectContext(coordinator: coordinator)
        let a = try writer.insertObject(entityName: "Node"), b = try writer.insertObject(entityName: "Node")
        try a.setValue("a", forKey: "name")
        try b.setValue("b", forKey: "name")
        try a.setValue(b, forKey: "next")
        try writer.save()
        let context = ManagedObjectContext(coordinator: coordinator)
        var request = FetchRequest(entityName: "Node")
        request.sortDescriptors = [FLSortDescriptor(key: "name", ascending: true)]
        request.fetchBatchSize = batchSize
        let nodes = try context.fetch(request).map { try #require($0 as? Node) }
        #expect(nodes.map(\.name) == ["a", "b"])
        #expect(nodes[0].next === nodes[1])
        #expect(nodes[0].nextWhenAwoken === nodes[1])
        #expect(!nodes[1].isFault)
        #expect(context.registeredObjects.count == 2)
    }

    /// Per-key validation sees an empty to-one as nil, and a destination it puts there is set
    /// on the object and saved (the empty to-one is read from its slot, without value(forKey:)).
    @Test func perKeyValidationOfAnEmptyToOneCanFillIt() throws {
        final class Home: ManagedObject, ManagedObjectSubclass {
            class var entityName: String { "Home" }
            class var managedProperties: [ManagedPropertyDeclaration] { [.attribute("name", .string)] }
        }
        final class Pet: ManagedObject, ManagedObjectSubclass {
            class var entityName: String { "Pet" }
            class var managedProperties: [ManagedPropertyDeclaration] { [.attribute("name", .string), .toOne("home", Home.self)] }
            var home: Home? { toOneValue(at: 1, named: "home") }
            override func validateValue(_ value: inout Any?, forKey key: String) throws {
                guard key == "home", value == nil, let context = managedObjectContext else { return }
                var request = FetchRequest(entityName: "Home")
                request.predicate = try FLPredicate(format: "name == %@", "shelter")
                value = try context.fetch(request).first
            }
        }
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Home", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
                RelationshipDescription(name: "pets", destination: "Pet", inverse: "home", toMany: true)
            ]),
            EntityDescription(name: "Pet", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
                RelationshipDescription(name: "home", destination: "Home", inverse: "pets")
            ]),
        ])
        let coordinator = PersistentStoreCoordinator(store: try SQLiteStore(inMemoryWith: model))
        try coordinator.registerClasses([Home.self, Pet.self])
        let context = ManagedObjectContext(coordinator: coordinator)
        let shelter = try context.insertObject(entityName: "Home")
        try shelter.setValue("shelter", forKey: "name")
        try context.save()
        let pet = try #require(try context.insertObject(entityName: "Pet") as? Pet)
        try pet.setValue("Rex", forKey: "name")
        #expect(pet.home == nil)
        try context.save()
        #expect(pet.home === shelter)
        let reader = ManagedObjectContext(coordinator: coordinator)
        let saved = try #require(try reader.fetch(FetchRequest(entityName: "Pet")).first as? Pet)
        #expect(saved.home?.value(forKey: "name") as? String == "shelter")
    }

    /// A key a subclass's check sets while another key is validated is validated in turn,
    /// in a stored object too (whose unchanged keys are skipped): the changes are read as
    /// the keys are reached, not once before.
    @Test func perKeyValidationSeesAKeySetByAnEarlierKeysCheck() throws {
        final class Note: ManagedObject, ManagedObjectSubclass {
            class var entityName: String { "Note" }
            class var managedProperties: [ManagedPropertyDeclaration] { [.attribute("a", .string), .attribute("b", .string)] }
            override func validateValue(_ value: inout Any?, forKey key: String) throws {
                switch key {
                case "a": try setValue("  set by a  ", forKey: "b")
                case "b": value = (value as? String)?.trimmingCharacters(in: .whitespaces)
                default: break
                }
            }
        }
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Note", attributes: [AttributeDescription(name: "a", type: .string), AttributeDescription(name: "b", type: .string)])
        ])
        let coordinator = PersistentStoreCoordinator(store: try SQLiteStore(inMemoryWith: model))
        try coordinator.registerClasses([Note.self])
        let writer = ManagedObjectContext(coordinator: coordinator)
        try writer.insertObject(entityName: "Note").setValue("first", forKey: "a")
        try writer.save()
        let context = ManagedObjectContext(coordinator: coordinator)
        let note = try #require(try context.fetch(FetchRequest(entityName: "Note")).first)
        try note.setValue("second", forKey: "a")
        try context.save()
        #expect(note.value(forKey: "b") as? String == "set by a")
    }

    @Test func perKeyValidationChecksAndReplacesValues() throws {
        let (context, _, _) = try Self.open()
        let asset = try InventoryAsset(context: context)
        asset.label = "forbidden"
        let error = try #require(throws: ObjectValidationError.self) { try context.save() }
        #expect(error.failures.map(\.code) == [.managedObjectValidation])
        #expect(error.failures.first?.key == "label")
        #expect(error.description.contains("labels cannot be \"forbidden\""))
        asset.label = "  Saw  "
        try context.save()
        #expect(asset.label == "Saw")
    }

    @Test func refusedTypedChangesFailTheNextSave() throws {
        let (context, _, _) = try Self.open()
        let (other, _, _) = try Self.open()
        let item = try #require(try InventoryItem.fetch(InventoryItem.fetchRequest(), in: context).first)
        let foreign = try #require(try InventoryAsset.fetch(InventoryAsset.fetchRequest(), in: other).first)
        let asset = item.asset
        item.asset = foreign
        #expect(item.asset === asset)  // refused: nothing changed
        let error = try #require(throws: ManagedObjectError.self) { try context.save() }
        #expect(error.code == .otherContext && error.key == "asset")
        try context.save()  // reported once
    }

    @Test func registrationChecksClassesAgainstTheModel() throws {
        let url = try SaveTests.copyOfInventory()
        let coordinator = try PersistentStoreCoordinator(model: try ManagedObjectModel(contentsOf: SaveTests.modelURL), storeURL: url)
        let error = try #require(throws: ClassRegistrationError.self) { try coordinator.registerClasses([WrongAsset.self, InventoryLocation.self]) }
        #expect(error.problems.contains("WrongAsset.label (entity Asset): declared as Integer 64, but the model's attribute is String"))
        #expect(error.problems.contains { $0.hasPrefix("WrongAsset.colour (entity Asset): the entity has no property colour") })
        #expect(error.problems.contains("WrongAsset.inventories (entity Asset): declared as a to-one relationship, but the model's inventories is not one"))
        #expect(error.problems.contains("InventoryLocation.inventories (entity Location): its destination entity Inventory has no registered class; register InventoryItem too"))
        #expect(coordinator.registeredClass(forEntityName: "Asset") == nil)  // nothing registered
        _ = ManagedObjectContext(coordinator: coordinator)
        let late = try #require(throws: ClassRegistrationError.self) { try coordinator.registerClasses(Self.classes) }
        #expect(late.description.contains("a context was already made"))
    }

    @Test func unregisteredClassesSayWhy() throws {
        let (context, _, _) = try Self.open(register: false)
        let error = try #require(throws: ManagedObjectError.self) { _ = try InventoryAsset(context: context) }
        #expect(error.description.contains("class InventoryAsset is not registered for entity Asset"))
        #expect(throws: FetchRequestError.self) { _ = try InventoryAsset.fetch(InventoryAsset.fetchRequest(), in: context) }
    }
}
