import Faultline
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Random sequences of inserts, sets, deletes, undo, redo, rollback, refreshes, child-context
/// saves and saves on a copy of the Inventory sample, checked after every step against a model
/// of what the context should show, and after every save against the rows read back with raw
/// SQL. A failing sequence is shrunk to a shortest one that still fails, and printed.
///
/// The normal run tries a few dozen seeded sequences (under 3 s); `FAULTLINE_LONG_TESTS=1`
/// tries thousands, and `FAULTLINE_STATE_SEED=<n>` replays one seed.
@Suite struct StateMachineTests {
    @Test func randomSequencesKeepTheContextAndTheStoreAsTheModelSays() throws {
        let environment = ProcessInfo.processInfo.environment
        let long = environment["FAULTLINE_LONG_TESTS"] == "1"
        let seeds: [UInt64] =
            if let seed = environment["FAULTLINE_STATE_SEED"].flatMap(UInt64.init) { [seed] } else { Array(0..<(long ? 3_000 : 40)) }
        let length = long ? 60 : 30
        for seed in seeds {
            var random = SeededRandom(state: seed)
            let ops = (0..<length).map { _ in Op.random(&random) }
            guard let failure = StateMachine.failure(of: ops) else { continue }
            let (shortest, why) = StateMachine.shrink(ops, failure)
            Issue.record("""
                seed \(seed): \(ops.count) operations fail; shrunk to \(shortest.count):
                \(StateMachine.transcript(of: shortest))
                \(why)
                """)
            return
        }
    }

    @Test func aKnownSequencePassesAndTheShrinkerKeepsAFailingCore() throws {
        // The harness itself: a sequence touching every operation passes, and shrinking a
        // sequence that fails on purpose (a check that nothing is labelled L3) finds the one
        // operation that makes such a label, in its simplest form.
        let ops: [Op] = [
            .insert(.asset), .setLabel(5, 1), .insert(.inventory), .setAsset(8, 5), .setLocation(8, 0),
            .child(.setLabel(0, 2)), .undo, .redo, .processPendingChanges, .delete(1), .refresh(2, merge: true),
            .save, .setCount(3, 4), .child(.delete(0)), .undo, .rollback, .child(.insert(.location)), .save,
        ]
        #expect(StateMachine.failure(of: ops) == nil)
        let failing: [Op] = [.insert(.asset), .setLabel(1, 7), .setLabel(5, 3), .save]
        let planted: (StateMachine.Model) -> String? = { model in
            model.objects.values.contains { $0.label == "L3" } ? "something labelled L3" : nil
        }
        let failure = try #require(StateMachine.failure(of: failing, extraCheck: planted))
        let (shortest, _) = StateMachine.shrink(failing, failure, extraCheck: planted)
        #expect(shortest == [.setLabel(0, 3)])
    }
}

// MARK: - Operations

/// One step of a sequence. Objects are named by position among the live objects of an entity
/// in the model (modulo their number), so every subsequence of a sequence is a valid sequence.
enum Op: Equatable, CustomStringConvertible {
    case insert(StateMachine.Entity)
    case setLabel(Int, Int)  // the n-th asset or location, label "L<value>"
    case setCount(Int, Int)  // the n-th inventory
    case setAsset(Int, Int?)  // the n-th inventory, the m-th asset or none
    case setLocation(Int, Int?)
    case delete(Int)  // the n-th object of any entity
    case processPendingChanges
    case undo, redo, rollback, save
    case refresh(Int, merge: Bool)
    indirect case child(Op)  // done in a new child context, then the child saves into the parent

    static func random(_ random: inout SeededRandom) -> Op {
        func index() -> Int { random.int(0...12) }
        switch random.int(0...99) {
        case 0..<10: return .insert(random.pick([.asset, .location, .inventory]))
        case 10..<22: return .setLabel(index(), random.int(0...5))
        case 22..<30: return .setCount(index(), random.int(0...5))
        case 30..<40: return .setAsset(index(), random.chance(80) ? index() : nil)
        case 40..<48: return .setLocation(index(), random.chance(80) ? index() : nil)
        case 48..<56: return .delete(index())
        case 56..<60: return .processPendingChanges
        case 60..<68: return .undo
        case 68..<73: return .redo
        case 73..<76: return .rollback
        case 76..<84: return .save
        case 84..<88: return .refresh(index(), merge: random.chance(50))
        default:
            let inner = Op.random(&random)
            switch inner {
            case .insert, .setLabel, .setCount, .setAsset, .setLocation, .delete: return .child(inner)
            default: return .child(.setLabel(index(), random.int(0...5)))
            }
        }
    }

    /// Simpler forms of this operation, tried by the shrinker.
    var simpler: [Op] {
        switch self {
        case .child(let inner): [inner]
        case .setLabel(let n, let v) where n > 0 || v > 0: [.setLabel(0, 0), .setLabel(0, v), .setLabel(n, 0)]
        case .setCount(let n, let v) where n > 0 || v > 0: [.setCount(0, 0), .setCount(0, v), .setCount(n, 0)]
        case .setAsset(let n, let m) where n > 0 || (m ?? 0) > 0: [.setAsset(0, m.map { _ in 0 }), .setAsset(0, m), .setAsset(n, m.map { _ in 0 })]
        case .setLocation(let n, let m) where n > 0 || (m ?? 0) > 0: [.setLocation(0, m.map { _ in 0 }), .setLocation(0, m), .setLocation(n, m.map { _ in 0 })]
        case .delete(let n) where n > 0: [.delete(0)]
        case .refresh(let n, let merge) where n > 0: [.refresh(0, merge: merge)]
        default: []
        }
    }

    var description: String {
        switch self {
        case .insert(let entity): "insert(.\(entity))"
        case .setLabel(let n, let v): "setLabel(\(n), \(v))"
        case .setCount(let n, let v): "setCount(\(n), \(v))"
        case .setAsset(let n, let m): "setAsset(\(n), \(m.map(String.init) ?? "nil"))"
        case .setLocation(let n, let m): "setLocation(\(n), \(m.map(String.init) ?? "nil"))"
        case .delete(let n): "delete(\(n))"
        case .processPendingChanges: "processPendingChanges"
        case .undo: "undo"
        case .redo: "redo"
        case .rollback: "rollback"
        case .save: "save"
        case .refresh(let n, let merge): "refresh(\(n), merge: \(merge))"
        case .child(let inner): "child(.\(inner))"
        }
    }
}

// MARK: - The machine

enum StateMachine {
    enum Entity: String, CaseIterable { case asset = "Asset", location = "Location", inventory = "Inventory" }

    /// One object as the model expects it. To-many relationships are not stored: an asset's
    /// or location's inventories are the inventories naming it.
    struct Object: Equatable {
        var entity: Entity
        var label: String?
        var count: Int16 = 0
        var asset: Int?
        var location: Int?
        /// Deleted, and whether its delete rules have run (``ManagedObjectContext/processPendingChanges()``).
        var deleted = false
        var propagated = false
        var inserted = false
    }

    /// What the context should hold (`current`), what the store holds (`saved`), and the undo
    /// and redo stacks of whole states: each user-level change is one step.
    struct Model {
        var objects: [Int: Object] = [:]
        var saved: [Int: Object] = [:]
        var undoStack: [[Int: Object]] = []
        var redoStack: [[Int: Object]] = []

        /// The handles of the live objects of an entity (or of every entity), in order.
        func live(_ entity: Entity?) -> [Int] {
            objects.filter { !$0.value.deleted && (entity == nil || $0.value.entity == entity) }.keys.sorted()
        }

        func pick(_ n: Int, _ entity: Entity?) -> Int? {
            let handles = live(entity)
            return handles.isEmpty ? nil : handles[n % handles.count]
        }

        /// The inventories an asset or location holds: those naming it, except deleted ones
        /// whose delete rules have removed them from it.
        static func inventories(of handle: Int, in objects: [Int: Object]) -> Set<Int> {
            Set(objects.filter { _, o in
                o.entity == .inventory && !(o.deleted && o.propagated) && (o.asset == handle || o.location == handle)
            }.keys)
        }

        /// What a user can see of a state: every live object's values and relationships, and
        /// which objects are deleted.
        static func view(_ objects: [Int: Object]) -> [Int: String] {
            var view: [Int: String] = [:]
            for (handle, object) in objects {
                view[handle] = describe(handle, object, inventories: inventories(of: handle, in: objects))
            }
            return view
        }

        static func describe(_ handle: Int, _ o: Object, inventories: Set<Int>) -> String {
            if o.deleted { return "deleted" }
            switch o.entity {
            case .asset, .location:
                return "\(o.entity.rawValue) label=\(o.label ?? "nil") inventories=\(inventories.sorted())"
            case .inventory:
                return "Inventory count=\(o.count) asset=\(o.asset.map { "h\($0)" } ?? "nil") location=\(o.location.map { "h\($0)" } ?? "nil")"
            }
        }

        /// Records a user-level change: a step on the undo stack when it changed what is seen.
        mutating func change(_ body: (inout [Int: Object]) -> Void) {
            let before = objects
            body(&objects)
            if Self.view(before) != Self.view(objects) {
                undoStack.append(before)
                redoStack.removeAll()
            }
        }

        /// Runs the delete rules of deleted objects: Cascade from assets and locations to
        /// their inventories; Nullify from inventories (they leave their asset's and
        /// location's to-many, which ``inventories(of:in:)`` derives).
        /// With `only`, the rules of those objects and of the ones they cascade to (a child
        /// context's save runs the rules of its own deletions, not those pending in the parent).
        static func propagate(_ objects: inout [Int: Object], only: Set<Int>? = nil) {
            var scope = only
            while let handle = objects.first(where: { $0.value.deleted && !$0.value.propagated && scope?.contains($0.key) != false })?.key {
                objects[handle]?.propagated = true
                guard let object = objects[handle], object.entity != .inventory else { continue }
                for child in inventories(of: handle, in: objects) {
                    objects[child]?.deleted = true
                    scope?.insert(child)  // a child context cascades to what the parent deleted too
                }
            }
        }
    }

    /// The live store and context for one run, with the handles of its objects.
    final class World {
        let url: URL
        let context: ManagedObjectContext
        var handles: [Int: ManagedObject] = [:]
        var handleOf: [ObjectIdentifier: Int] = [:]
        var model = Model()
        var log: [String] = []

        init() throws {
            url = try SaveTests.copyOfInventory()
            (context, _) = try SaveTests.open(url)
            // The seed rows: handles 0-4 the assets, 5-7 the locations, 8-15 the inventories.
            var next = 0
            for entity in [Entity.asset, .location, .inventory] {
                let objects = try context.fetch(FetchRequest(entityName: entity.rawValue)).sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }
                for object in objects {
                    add(object, next)
                    next += 1
                }
            }
            for (handle, object) in handles {
                let entity = Entity(rawValue: object.entity.name) ?? .asset
                var o = Object(entity: entity, label: object.value(forKey: "label") as? String)
                if entity == .inventory {
                    o.label = nil
                    o.count = object.value(forKey: "count") as? Int16 ?? 0
                    o.asset = (object.value(forKey: "asset") as? ManagedObject).flatMap { handleOf[ObjectIdentifier($0)] }
                    o.location = (object.value(forKey: "location") as? ManagedObject).flatMap { handleOf[ObjectIdentifier($0)] }
                }
                model.objects[handle] = o
            }
            model.saved = model.objects
        }

        func add(_ object: ManagedObject, _ handle: Int) {
            handles[handle] = object
            handleOf[ObjectIdentifier(object)] = handle
        }

        var nextHandle: Int { (handles.keys.max() ?? -1) + 1 }

        func name(_ handle: Int?) -> String {
            guard let handle else { return "nil" }
            return "h\(handle)"
        }

        // MARK: Running an operation

        func run(_ op: Op) throws {
            switch op {
            case .insert(let entity):
                let object = try context.insertObject(entityName: entity.rawValue)
                let handle = nextHandle
                add(object, handle)
                model.change { $0[handle] = Object(entity: entity, inserted: true) }
                log.append("\(name(handle)) = insert \(entity.rawValue)")
            case .setLabel(let n, let value):
                guard let target = labelled(n), model.objects[target]?.label != "L\(value)" else { return log.append("(\(op): no change)") }
                try handles[target]?.setValue("L\(value)", forKey: "label")
                model.change { $0[target]?.label = "L\(value)" }
                log.append("\(name(target)).label = \"L\(value)\"")
            case .setCount(let n, let value):
                guard let target = model.pick(n, .inventory), model.objects[target]?.count != Int16(value) else {
                    return log.append("(\(op): no change)")
                }
                try handles[target]?.setValue(value, forKey: "count")
                model.change { $0[target]?.count = Int16(value) }
                log.append("\(name(target)).count = \(value)")
            case .setAsset(let n, let m), .setLocation(let n, let m):
                let key = if case .setAsset = op { "asset" } else { "location" }
                let entity: Entity = key == "asset" ? .asset : .location
                guard let target = model.pick(n, .inventory) else { return log.append("(\(op): no inventory)") }
                let destination = m.flatMap { model.pick($0, entity) }
                let current = key == "asset" ? model.objects[target]?.asset : model.objects[target]?.location
                guard current != destination else { return log.append("(\(op): no change)") }
                try handles[target]?.setValue(destination.flatMap { handles[$0] }, forKey: key)
                model.change {
                    if key == "asset" { $0[target]?.asset = destination } else { $0[target]?.location = destination }
                }
                log.append("\(name(target)).\(key) = \(name(destination))")
            case .delete(let n):
                guard let target = model.pick(n, nil), let object = handles[target] else { return log.append("(\(op): no object)") }
                context.delete(object)
                model.change { $0[target]?.deleted = true }
                log.append("delete \(name(target))")
            case .processPendingChanges:
                try context.processPendingChanges()
                model.change { Model.propagate(&$0) }
                log.append("processPendingChanges()")
            case .undo:
                context.undo()
                if let state = model.undoStack.popLast() {
                    model.redoStack.append(model.objects)
                    model.objects = state
                }
                log.append("undo()")
            case .redo:
                context.redo()
                if let state = model.redoStack.popLast() {
                    model.undoStack.append(model.objects)
                    model.objects = state
                }
                log.append("redo()")
            case .rollback:
                context.rollback()
                model.objects = model.saved
                model.undoStack.removeAll()
                model.redoStack.removeAll()
                log.append("rollback()")
            case .save:
                let hadChanges = context.hasChanges
                try context.save()
                Model.propagate(&model.objects)
                model.objects = model.objects.filter { !$0.value.deleted }
                for key in model.objects.keys { model.objects[key]?.inserted = false }
                model.saved = model.objects
                // A save clears the undo stack. A save with nothing to save (after an undo, say)
                // may return at once and keep it: that is not checked here.
                if hadChanges || (!context.canUndo && !context.canRedo) {
                    model.undoStack.removeAll()
                    model.redoStack.removeAll()
                }
                log.append("save()")
            case .refresh(let n, let merge):
                guard let target = model.pick(n, nil), let object = handles[target] else { return log.append("(\(op): no object)") }
                // Dropping changes (`mergeChanges: false`) would leave the inverse sides as
                // they were, as in Core Data: only objects without changes are refreshed so.
                if !merge && changed(target) { return log.append("(\(op): has changes)") }
                context.refresh(object, mergeChanges: merge)
                log.append("refresh(\(name(target)), mergeChanges: \(merge))")
            case .child(let inner):
                try runInChild(inner)
            }
        }

        /// The n-th live asset or location.
        func labelled(_ n: Int) -> Int? {
            let handles = model.live(.asset) + model.live(.location)
            return handles.isEmpty ? nil : handles.sorted()[n % handles.count]
        }

        /// Whether an object differs from its saved state (values or inventories).
        func changed(_ handle: Int) -> Bool {
            guard let now = model.objects[handle], let saved = model.saved[handle] else { return true }
            return now != saved || Model.inventories(of: handle, in: model.objects) != Model.inventories(of: handle, in: model.saved)
        }

        func runInChild(_ op: Op) throws {
            let child = ManagedObjectContext(parent: context)
            func inChild(_ handle: Int?) throws -> ManagedObject? {
                guard let handle, let object = handles[handle] else { return nil }
                return try child.existingObject(with: object.objectID)
            }
            var description = ""
            switch op {
            case .insert(let entity):
                let object = try child.insertObject(entityName: entity.rawValue)
                if entity == .inventory { try object.setValue(5, forKey: "count") } else { try object.setValue("L5", forKey: "label") }
                try child.save()
                let handle = nextHandle
                add(context.object(with: object.objectID), handle)
                model.change {
                    $0[handle] = Object(entity: entity, label: entity == .inventory ? nil : "L5", count: entity == .inventory ? 5 : 0, inserted: true)
                }
                description = "\(name(handle)) = insert \(entity.rawValue) with \(entity == .inventory ? "count 5" : "label L5")"
            case .setLabel(let n, let value):
                guard let target = labelled(n), model.objects[target]?.label != "L\(value)" else { return log.append("(child \(op): no change)") }
                try inChild(target)?.setValue("L\(value)", forKey: "label")
                try child.save()
                model.change { $0[target]?.label = "L\(value)" }
                description = "\(name(target)).label = \"L\(value)\""
            case .setCount(let n, let value):
                guard let target = model.pick(n, .inventory), model.objects[target]?.count != Int16(value) else {
                    return log.append("(child \(op): no change)")
                }
                try inChild(target)?.setValue(value, forKey: "count")
                try child.save()
                model.change { $0[target]?.count = Int16(value) }
                description = "\(name(target)).count = \(value)"
            case .setAsset(let n, let m), .setLocation(let n, let m):
                let key = if case .setAsset = op { "asset" } else { "location" }
                let entity: Entity = key == "asset" ? .asset : .location
                guard let target = model.pick(n, .inventory) else { return log.append("(child \(op): no inventory)") }
                let destination = m.flatMap { model.pick($0, entity) }
                let current = key == "asset" ? model.objects[target]?.asset : model.objects[target]?.location
                guard current != destination else { return log.append("(child \(op): no change)") }
                try inChild(target)?.setValue(try inChild(destination), forKey: key)
                try child.save()
                model.change {
                    if key == "asset" { $0[target]?.asset = destination } else { $0[target]?.location = destination }
                }
                description = "\(name(target)).\(key) = \(name(destination))"
            case .delete(let n):
                guard let target = model.pick(n, nil), let object = try inChild(target) else { return log.append("(child \(op): no object)") }
                child.delete(object)
                // The child's save runs the delete rules there and pushes their effects; the
                // parent runs them again at its next processPendingChanges (for relationships
                // the child did not see), which can record an undo step that changes nothing
                // visible. Both go in one undo step here, as one user action.
                try context.undoGroup {
                    try child.save()
                    try context.processPendingChanges()
                }
                model.change {
                    $0[target]?.deleted = true
                    Model.propagate(&$0)  // the child's rules, then the parent's pending ones
                }
                description = "delete \(name(target))"
            default:
                return log.append("(child \(op): not a change)")
            }
            log.append("child: \(description); child.save()")
        }

        // MARK: Checking

        /// What the context shows, in the model's words, for every object the model knows.
        func contextView() -> [Int: String] {
            var view: [Int: String] = [:]
            for handle in model.objects.keys {
                guard let object = handles[handle] else { continue }
                if object.isDeleted {
                    view[handle] = "deleted"
                    continue
                }
                guard object.managedObjectContext === context else {
                    view[handle] = "not in the context"
                    continue
                }
                func named(_ value: Any?) -> String {
                    guard let object = value as? ManagedObject else { return value.map { "\($0)" } ?? "nil" }
                    return handleOf[ObjectIdentifier(object)].map { "h\($0)" } ?? "an unknown \(object.objectID.uriRepresentation)"
                }
                if object.entity.name == "Inventory" {
                    let count = (object.value(forKey: "count") as? Int16).map(String.init) ?? "nil"
                    view[handle] = "Inventory count=\(count) asset=\(named(object.value(forKey: "asset"))) location=\(named(object.value(forKey: "location")))"
                } else {
                    let inventories = (object.value(forKey: "inventories") as? [ManagedObject] ?? []).compactMap { handleOf[ObjectIdentifier($0)] }
                    view[handle] = "\(object.entity.name) label=\(object.value(forKey: "label") as? String ?? "nil") inventories=\(inventories.sorted())"
                }
            }
            return view
        }

        /// The differences between what the model expects and what the context shows.
        func checkContext() -> String? {
            let expected = Model.view(model.objects)
            let actual = contextView()
            var lines: [String] = []
            for handle in expected.keys.sorted() where expected[handle] != actual[handle] {
                lines.append("h\(handle): expected \(expected[handle] ?? "nothing"), the context has \(actual[handle] ?? "nothing")")
            }
            let inserted = Set(context.insertedObjects.compactMap { handleOf[ObjectIdentifier($0)] })
            let expectedInserted = Set(model.objects.filter { $0.value.inserted && !$0.value.deleted }.keys)
            if inserted != expectedInserted {
                lines.append("insertedObjects: expected \(expectedInserted.sorted()), the context has \(inserted.sorted())")
            }
            return lines.isEmpty ? nil : "the context differs from the model:\n" + lines.joined(separator: "\n")
        }

        /// The rows of the store, read with raw SQL, against the model's saved state.
        func checkStore() throws -> String? {
            let raw = try Connection(path: url.path, mode: .readOnly)
            var keyOf: [Int: Int64] = [:]
            for (handle, _) in model.saved {
                guard let object = handles[handle], !object.objectID.isTemporaryID else {
                    return "h\(handle) was saved but still has a temporary ID"
                }
                keyOf[handle] = object.objectID.primaryKey
            }
            func key(_ handle: Int?) -> String { handle.flatMap { keyOf[$0] }.map(String.init) ?? "NULL" }
            var expected: [String] = []
            for (handle, o) in model.saved {
                switch o.entity {
                case .asset, .location: expected.append("\(o.entity.rawValue) \(key(handle)) \(o.label ?? "NULL")")
                case .inventory: expected.append("Inventory \(key(handle)) \(o.count) \(key(o.asset)) \(key(o.location))")
                }
            }
            func text(_ value: SQLValue) -> String {
                switch value {
                case .null: "NULL"
                case .integer(let i): String(i)
                case .text(let t): t
                default: "\(value)"
                }
            }
            var actual: [String] = []
            for row in try raw.query("SELECT Z_PK, ZLABEL FROM ZASSET") { actual.append("Asset " + row.values.map(text).joined(separator: " ")) }
            for row in try raw.query("SELECT Z_PK, ZLABEL FROM ZLOCATION") { actual.append("Location " + row.values.map(text).joined(separator: " ")) }
            for row in try raw.query("SELECT Z_PK, ZCOUNT, ZASSET, ZLOCATION FROM ZINVENTORY") {
                actual.append("Inventory " + row.values.map(text).joined(separator: " "))
            }
            for (entity, table) in [("Asset", "ZASSET"), ("Inventory", "ZINVENTORY"), ("Location", "ZLOCATION")] {
                let max = try raw.scalar("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = ?", [.text(entity)])?.int64 ?? 0
                let highest = try raw.scalar("SELECT MAX(Z_PK) FROM \(table)")?.int64 ?? 0
                if highest > max { return "Z_PRIMARYKEY.Z_MAX of \(entity) is \(max), below its highest Z_PK \(highest)" }
            }
            guard expected.sorted() != actual.sorted() else { return nil }
            return "the store differs from the model (- expected, + in the store):\n"
                + LineDiff.render(expected: expected.sorted(), actual: actual.sorted()).split(separator: "\n").filter { !$0.hasPrefix("  ") }.joined(separator: "\n")
        }
    }

    /// Why a sequence fails (the step and the difference), or nil when it passes.
    static func failure(of ops: [Op], extraCheck: ((Model) -> String?)? = nil) -> String? {
        do {
            let world = try World()
            for (step, op) in ops.enumerated() {
                do {
                    try world.run(op)
                } catch {
                    return "step \(step + 1) (\(op)) threw: \(error)"
                }
                if case .save = op, let difference = try world.checkStore() { return "after step \(step + 1) (save), \(difference)" }
                if let difference = world.checkContext() { return "after step \(step + 1) (\(op)), \(difference)" }
                if case .child = op, let difference = try world.checkStore() {
                    // A child's save writes nothing: the store is still as last saved.
                    return "after step \(step + 1) (\(op)), \(difference)"
                }
                if let extraCheck, let message = extraCheck(world.model) { return "after step \(step + 1) (\(op)), \(message)" }
            }
            return try world.checkStore().map { "at the end, \($0)" }
        } catch {
            return "the harness failed: \(error)"
        }
    }

    /// A shortest sequence that still fails, found by removing runs of operations (halves,
    /// quarters, … single ones) and then simplifying each one, at most 400 tries.
    static func shrink(_ ops: [Op], _ failure: String, extraCheck: ((Model) -> String?)? = nil) -> ([Op], String) {
        var best = ops
        var why = failure
        var tries = 0
        func attempt(_ candidate: [Op]) -> Bool {
            guard tries < 400 else { return false }
            tries += 1
            guard let message = Self.failure(of: candidate, extraCheck: extraCheck) else { return false }
            best = candidate
            why = message
            return true
        }
        var chunk = max(1, best.count / 2)
        while chunk >= 1 && tries < 400 {
            var start = 0
            var removed = false
            while start < best.count {
                let candidate = Array(best[..<start] + best[min(best.count, start + chunk)...])
                if !candidate.isEmpty, attempt(candidate) { removed = true } else { start += chunk }
            }
            if !removed { chunk /= 2 }
        }
        var simplified = true
        while simplified && tries < 400 {
            simplified = false
            for i in best.indices {
                for simpler in best[i].simpler where tries < 400 {
                    var candidate = best
                    candidate[i] = simpler
                    if attempt(candidate) {
                        simplified = true
                        break
                    }
                }
            }
        }
        return (best, why)
    }

    /// A sequence as the operations were run, one line each, with the objects they reached.
    static func transcript(of ops: [Op]) -> String {
        guard let world = try? World() else { return ops.map(\.description).joined(separator: "\n") }
        var lines: [String] = []
        for (step, op) in ops.enumerated() {
            let before = world.log.count
            let threw: String?
            do {
                try world.run(op)
                threw = nil
            } catch {
                threw = "\(error)"
            }
            let done = world.log[before...].joined(separator: "; ")
            lines.append("  \(step + 1). \(op) → \(done)\(threw.map { " — threw: \($0)" } ?? "")")
            if threw != nil { break }
        }
        return lines.joined(separator: "\n")
    }
}
