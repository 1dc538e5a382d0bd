import Faultline
import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Changes and saving on the Inventory sample (a temporary copy): exact SQL, the file
/// afterwards read back with raw SQL, conflicts between two coordinators.
@Suite struct SaveTests {
    static let modelURL = TestSupport.inventoryFolder.appendingPathComponent("Inventory.xcdatamodeld")

    /// A writable copy of the Inventory store.
    static func copyOfInventory() throws -> URL {
        let folder = try TestSupport.temporaryDirectory("faultline-save")
        let url = folder.appendingPathComponent("Inventory.sqlite")
        try FileManager.default.copyItem(at: TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite"), to: url)
        return url
    }

    static func open(_ url: URL, readOnly: Bool = false) throws -> (ManagedObjectContext, Recorder) {
        let model = try ManagedObjectModel(contentsOf: modelURL)
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: url, options: .init(readOnly: readOnly))
        let recorder = Recorder()
        coordinator.store.connection.addTraceObserver { event in
            if case .statement(let sql, let arguments) = event { recorder.append(sql, arguments) }
        }
        return (ManagedObjectContext(coordinator: coordinator), recorder)
    }

    @Test func insertReservesAKeyAndInsertsTheRow() throws {
        let url = try Self.copyOfInventory()
        let (context, sql) = try Self.open(url)
        let asset = try context.insertObject(entityName: "Asset")
        #expect(asset.objectID.isTemporaryID)
        #expect(asset.objectID.uriRepresentation.hasPrefix("x-coredata:///Asset/t"))
        try asset.setValue("Drone", forKey: "label")
        #expect(context.hasChanges && context.insertedObjects == [asset])
        try context.save()
        expectSQL(sql.sql, [
            "BEGIN EXCLUSIVE",
            "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?",
            "UPDATE OR FAIL Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?",
            "INSERT INTO ZASSET(Z_PK, Z_ENT, Z_OPT, ZLABEL) VALUES(?, ?, ?, ?)",
            "COMMIT",
        ])
        #expect(sql.arguments[1] == [1])
        #expect(sql.arguments[2] == [6, 1, 5])
        #expect(sql.arguments[3] == [6, 1, 1, "Drone"])
        #expect(!context.hasChanges)
        #expect(asset.objectID.uriRepresentation == "x-coredata://\(context.coordinator.store.identifier)/Asset/p6")
        #expect(context.object(with: asset.objectID) === asset)
        let raw = try Connection(path: url.path, mode: .readWrite)
        #expect(try raw.query("SELECT Z_PK, Z_ENT, Z_OPT, ZLABEL FROM ZASSET WHERE Z_PK = 6").first?.values == [6, 1, 1, "Drone"])
        #expect(try raw.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 1") == 6)
    }

    /// Saves big enough that their plan's buffers are kept for the next save
    /// (`ScratchArrays`): inserts, then updates of them, then updates again, each written
    /// exactly, with no value of an earlier save's plan left in a later one.
    @Test func largeSavesInARowWriteExactlyTheirOwnRows() throws {
        let url = try Self.copyOfInventory()
        let (context, _) = try Self.open(url)
        let count = 3000
        var assets: [ManagedObject] = []
        for index in 0..<count {
            let asset = try context.insertObject(entityName: "Asset")
            try asset.setValue("new \(index)", forKey: "label")
            assets.append(asset)
        }
        try context.save()
        for round in 1...2 {
            for (index, asset) in assets.enumerated() where index % round == 0 {
                try asset.setValue("round \(round) \(index)", forKey: "label")
            }
            try context.save()
        }
        let raw = try Connection(path: url.path, mode: .readWrite)
        let rows = try raw.query("SELECT Z_PK, Z_OPT, ZLABEL FROM ZASSET WHERE Z_PK > 5 ORDER BY Z_PK")
        #expect(rows.count == count)
        let byKey = Dictionary(rows.map { ($0.values[0], $0) }, uniquingKeysWith: { first, _ in first })
        for (index, asset) in assets.enumerated() {
            let row = try #require(byKey[.integer(asset.objectID.primaryKey)], "row of asset \(index)")
            let label = index % 2 == 0 ? "round 2 \(index)" : "round 1 \(index)"
            let version: Int64 = index % 2 == 0 ? 3 : 2
            #expect(row.values == [.integer(asset.objectID.primaryKey), .integer(version), .text(label)], "asset \(index)")
        }
    }

    /// A save whose new objects are most of the registry takes their temporary IDs out of it
    /// in one pass; an object registered by a temporary ID that is none of the save's (a fault
    /// for another context's new object) keeps its place, and a forgotten new object leaves.
    @Test func aSaveOfNewObjectsKeepsOtherObjectsRegisteredByTemporaryIDs() throws {
        let url = try Self.copyOfInventory()
        let (context, _) = try Self.open(url)
        let elsewhere = try ManagedObjectContext(coordinator: context.coordinator).insertObject(entityName: "Asset")
        let foreign = context.object(with: elsewhere.objectID)
        #expect(foreign.isFault && foreign.objectID.isTemporaryID)
        var assets: [ManagedObject] = []
        for label in ["Drone", "Rover", "Buoy"] {
            let asset = try context.insertObject(entityName: "Asset")
            try asset.setValue(label, forKey: "label")
            assets.append(asset)
        }
        let temporary = assets.map(\.objectID)
        context.delete(assets[2])
        try context.save()
        #expect(context.object(with: elsewhere.objectID) === foreign)
        for (asset, id) in zip(assets.prefix(2), temporary) {
            #expect(!asset.objectID.isTemporaryID)
            #expect(context.registeredObjects[asset.objectID] === asset)
            #expect(context.registeredObjects[id] == nil)
        }
        #expect(context.registeredObjects[temporary[2]] == nil)
        #expect(context.registeredObjects.count == 3)
    }

    /// A save handles its objects in save order — new objects in insertion order after stored
    /// ones by key, then entity name — whether their numbers place them directly (distinct,
    /// close together) or they are compared (keys shared by two entities, keys far apart):
    /// the order the notification lists updated objects in.
    @Test func aSaveOrdersItsObjectsByInsertionThenKeyThenEntity() throws {
        let url = try Self.copyOfInventory()
        let (context, _) = try Self.open(url)
        var saved: [SaveNotification] = []
        context.didSave = { saved.append($0) }
        func objects(_ entity: String) throws -> [ManagedObject] {
            try context.fetch(FetchRequest(entityName: entity)).map { $0 }
        }
        // Keys 1–5 of one entity, changed last to first: placed by key.
        let assets = try objects("Asset")
        for asset in assets.reversed() { try asset.setValue("\(asset.value(forKey: "label") ?? "")!", forKey: "label") }
        try context.save()
        #expect(saved.last?.updatedObjectIDs == assets.map(\.objectID).sorted { $0.primaryKey < $1.primaryKey })
        // Keys 1–3 of two entities: compared, key first, then entity name.
        let locations = try objects("Location")
        for object in locations.reversed() + assets.reversed() { try object.setValue("\(object.value(forKey: "label") ?? "")?", forKey: "label") }
        try context.save()
        let expected = (assets + locations).map(\.objectID).sorted { ($0.primaryKey, $0.entityName) < ($1.primaryKey, $1.entityName) }
        #expect(saved.last?.updatedObjectIDs == expected)
        #expect(expected.prefix(2).map(\.entityName) == ["Asset", "Location"])
        // New objects in insertion order, after the stored ones (one of them changed).
        let new = try (0..<3).map { index -> ManagedObject in
            let asset = try context.insertObject(entityName: "Asset")
            try asset.setValue("New \(index)", forKey: "label")
            return asset
        }
        try assets[4].setValue("Stove", forKey: "label")
        try context.save()
        #expect(saved.last?.insertedObjectIDs == new.map(\.objectID))
        #expect(new.map(\.objectID.primaryKey) == [6, 7, 8])
    }

    @Test func aValueUnequalToItselfIsNoChangeOnceSaved() throws {
        // NaN is not equal to itself: values a save shares with the committed ones must not be
        // compared slot by slot, or a saved NaN would leave its object changed.
        let folder = try TestSupport.temporaryDirectory("faultline-nan")
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Reading", attributes: [
                AttributeDescription(name: "value", type: .double), AttributeDescription(name: "note", type: .string),
            ])
        ])
        let coordinator = try PersistentStoreCoordinator(
            model: model, storeURL: folder.appendingPathComponent("Readings.sqlite"), options: .init(readOnly: false, createIfMissing: true))
        let context = ManagedObjectContext(coordinator: coordinator)
        let reading = try context.insertObject(entityName: "Reading")
        try reading.setValue(Double.nan, forKey: "value")
        try context.save()
        #expect(!reading.isUpdated && !reading.hasChanges && !context.hasChanges)
        try reading.setValue("checked", forKey: "note")
        #expect(reading.isUpdated)
        try context.save()
        #expect(!reading.isUpdated && !reading.hasChanges && !context.hasChanges)
    }

    @Test func changeDetectionFollowsEveryWayValuesMove() throws {
        // isUpdated compares only the slots written since the values were loaded; every path
        // that moves values must keep that true.
        let url = try Self.copyOfInventory()
        let (context, _) = try Self.open(url)
        let locations = try context.fetch(FetchRequest(entityName: "Location"))
        let garage = try #require(locations.first { $0.value(forKey: "label") as? String == "Garage" })
        let other = try #require(locations.first { $0 !== garage })
        #expect(!garage.isUpdated && !context.hasChanges)
        try garage.setValue("Shed", forKey: "label")
        #expect(garage.isUpdated && garage.changedValues().keys.sorted() == ["label"])
        try garage.setValue("Garage", forKey: "label")
        #expect(!garage.isUpdated && !context.hasChanges)  // set back: no change
        try garage.setValue("Shed", forKey: "label")
        context.undo()
        #expect(!garage.isUpdated && garage.value(forKey: "label") as? String == "Garage")
        context.redo()
        #expect(garage.isUpdated)
        context.rollback()
        #expect(!garage.isUpdated && garage.value(forKey: "label") as? String == "Garage")
        try garage.setValue("Shed", forKey: "label")
        try context.save()
        #expect(!garage.isUpdated && !context.hasChanges)
        try garage.setValue("Garage", forKey: "label")
        #expect(garage.isUpdated)  // differs from the saved "Shed"
        context.refresh(garage, mergeChanges: true)
        #expect(garage.isUpdated && garage.value(forKey: "label") as? String == "Garage")
        context.refresh(garage, mergeChanges: false)
        #expect(!garage.isUpdated && garage.value(forKey: "label") as? String == "Shed")
        #expect(!other.isUpdated)
    }

    @Test func insertWithRelationshipsKeepsInversesAndWritesForeignKeys() throws {
        let url = try Self.copyOfInventory()
        let (context, sql) = try Self.open(url)
        let assets = try context.fetch(FetchRequest(entityName: "Asset"))
        let laptop = try #require(assets.first { $0.value(forKey: "label") as? String == "Laptop" })
        let garage = context.object(with: ManagedObjectID(entityName: "Location", storeIdentifier: context.coordinator.store.identifier, primaryKey: 2))
        let inventory = try context.insertObject(entityName: "Inventory")
        #expect(inventory.value(forKey: "count") as? Int16 == 0)  // the model's default
        try inventory.setValue(3, forKey: "count")
        try inventory.setValue(Date(timeIntervalSinceReferenceDate: 820_000_000), forKey: "date")
        try inventory.setValue(laptop, forKey: "asset")
        try garage.addObject(inventory, toRelationship: "inventories")
        #expect(inventory.value(forKey: "location") as? ManagedObject === garage)
        #expect((laptop.value(forKey: "inventories") as? [ManagedObject])?.contains(inventory) == true)
        sql.clear()
        try context.save()
        expectSQL(sql.sql, [
            // The garage is still a fault: the save reads its version.
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZLOCATION t0 WHERE  t0.Z_PK = ?",
            "BEGIN EXCLUSIVE",
            "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?",
            "UPDATE OR FAIL Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?",
            "INSERT INTO ZINVENTORY(Z_PK, Z_ENT, Z_OPT, ZCOUNT, ZASSET, ZLOCATION, ZDATE) VALUES(?, ?, ?, ?, ?, ?, ?)",
            // Both sides of each new relationship changed, so both rows are version-checked.
            "UPDATE ZASSET SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "UPDATE ZLOCATION SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "COMMIT",
        ])
        #expect(sql.arguments[4] == [9, 2, 1, 3, 4, 2, .real(820_000_000)])
        #expect(sql.arguments[5] == [2, 4, 1] && sql.arguments[6] == [2, 2, 1])
        #expect(inventory.objectID.primaryKey == 9)
        // The garage's to-many, never fired, now loads from the store with the new row.
        #expect((garage.value(forKey: "inventories") as? [ManagedObject])?.map(\.objectID.primaryKey) == [4, 5, 9])
    }

    @Test func updateWritesChangedColumnsWithTheVersionChecked() throws {
        let url = try Self.copyOfInventory()
        let (context, sql) = try Self.open(url)
        let location = try #require(try context.fetch(FetchRequest(entityName: "Location")).first)
        try location.setValue("Cellar", forKey: "label")
        #expect(context.updatedObjects == [location])
        #expect(location.changedValues()["label"] as? String == "Cellar")
        #expect(location.committedValues(forKeys: ["label"])["label"] as? String == "Jaye's Basement")
        sql.clear()
        try context.save()
        expectSQL(sql.sql, ["BEGIN EXCLUSIVE", "UPDATE ZLOCATION SET ZLABEL = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?", "COMMIT"])
        #expect(sql.arguments[1] == ["Cellar", 2, 1, 1])
        #expect(location.rowVersion == 2)
        #expect(location.changedValues().isEmpty)
        let raw = try Connection(path: url.path, mode: .readWrite)
        #expect(try raw.query("SELECT Z_OPT, ZLABEL FROM ZLOCATION WHERE Z_PK = 1").first?.values == [2, "Cellar"])
        // Moving an inventory to another asset updates its foreign key only.
        let inventory = context.object(with: ManagedObjectID(entityName: "Inventory", storeIdentifier: context.coordinator.store.identifier, primaryKey: 1))
        let bicycle = context.object(with: ManagedObjectID(entityName: "Asset", storeIdentifier: context.coordinator.store.identifier, primaryKey: 3))
        try inventory.setValue(bicycle, forKey: "asset")
        sql.clear()
        try context.save()
        // Both assets' to-manys changed: their rows are version-checked too.
        expectSQL(sql.sql, [
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZASSET t0 WHERE  t0.Z_PK = ?",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZASSET t0 WHERE  t0.Z_PK = ?",
            "BEGIN EXCLUSIVE",
            "UPDATE ZASSET SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "UPDATE ZASSET SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "UPDATE ZINVENTORY SET ZASSET = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "COMMIT",
        ])
        #expect(sql.arguments[3] == [2, 1, 1] && sql.arguments[4] == [2, 3, 1])
        #expect(sql.arguments[5] == [3, 2, 1, 1])
    }

    @Test func typeErrorsNameEntityAndKey() throws {
        let url = try Self.copyOfInventory()
        let (context, _) = try Self.open(url)
        let inventory = try context.insertObject(entityName: "Inventory")
        #expect(throws: ManagedObjectError.self) { try inventory.setValue("many", forKey: "count") }
        do {
            try inventory.setValue(70_000, forKey: "count")
            Issue.record("an Int16 out of range was accepted")
        } catch let error as ManagedObjectError {
            #expect(error.code == .typeMismatch && error.entityName == "Inventory" && error.key == "count")
            #expect(error.description.contains("Inventory.count"))
        }
        do {
            try inventory.setValue(1, forKey: "colour")
            Issue.record("an unknown key was accepted")
        } catch let error as ManagedObjectError {
            #expect(error.code == .unknownKey && error.key == "colour")
        }
        let location = try context.insertObject(entityName: "Location")
        #expect(throws: ManagedObjectError.self) { try inventory.setValue(location, forKey: "asset") }
        #expect(throws: ManagedObjectError.self) { _ = try context.insertObject(entityName: "Nope") }
    }

    @Test func aReadOnlyStoreRefusesToSaveAndChangesNothing() throws {
        let url = try Self.copyOfInventory()
        let before = try TestSupport.snapshot(of: url.deletingLastPathComponent())
        let (context, _) = try Self.open(url, readOnly: true)
        try context.insertObject(entityName: "Asset").setValue("Kite", forKey: "label")
        do {
            try context.save()
            Issue.record("a read-only store saved")
        } catch let error as PersistentStoreError {
            #expect(error.code == .readOnly)
        }
        #expect(context.hasChanges)
        #expect(try TestSupport.snapshot(of: url.deletingLastPathComponent()) == before)
    }

    @Test func didSaveReportsPermanentIDsAndASecondContextMerges() throws {
        let url = try Self.copyOfInventory()
        let (writer, _) = try Self.open(url)
        let reader = ManagedObjectContext(coordinator: writer.coordinator)
        let readerLocation = try #require(try reader.fetch(FetchRequest(entityName: "Location")).first)
        #expect(readerLocation.value(forKey: "label") as? String == "Jaye's Basement")
        var notifications: [SaveNotification] = []
        writer.didSave = { notifications.append($0); reader.mergeChanges(fromContextDidSave: $0) }
        let location = try #require(try writer.fetch(FetchRequest(entityName: "Location")).first)
        try location.setValue("Cellar", forKey: "label")
        let asset = try writer.insertObject(entityName: "Asset")
        try asset.setValue("Kite", forKey: "label")
        try writer.save()
        #expect(notifications.count == 1)
        #expect(notifications.first?.insertedObjectIDs == [asset.objectID])
        #expect(notifications.first?.updatedObjectIDs == [location.objectID])
        #expect(readerLocation.value(forKey: "label") as? String == "Cellar")
    }
}
