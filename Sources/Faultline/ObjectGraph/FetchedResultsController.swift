import FaultlineModel
import FaultlinePredicate
import Foundation

/// A fetch request kept up to date with its context, in sections: Core Data's
/// `NSFetchedResultsController`.
///
/// ```swift
/// var request = FetchRequest(entityName: "Inventory")
/// request.sortDescriptors = [FLSortDescriptor(key: "location.label"), FLSortDescriptor(key: "count")]
/// let controller = try FetchedResultsController(fetchRequest: request, context: context, sectionNameKeyPath: "location.label")
/// controller.onChange = { changes in
///     for change in changes.objectChanges { print(change) }   // insert/delete/move/update with index paths
/// }
/// try controller.performFetch()
/// print(controller.sections?.map(\.name) ?? [])              // ["Garage", "Jaye's Basement", "Office"]
/// ```
///
/// After ``performFetch()`` the controller follows its context: at each objects-did-change
/// (``ManagedObjectContext/processPendingChanges()``, a save, the end of a `perform` block, a
/// merge of another context's save, undo, rollback) objects of the entity that were inserted
/// or changed are matched against the predicate in memory and placed by the sort descriptors;
/// deleted ones leave. The differences are reported to ``onChange`` as section inserts and
/// deletes and object inserts, deletes, moves and updates, with index paths as
/// `[section, row]` (Foundation's `IndexPath`), and as a ``Snapshot`` of section names and
/// object IDs. A reset of the context fetches again.
///
/// The controller, like its objects, belongs to its context's queue. It holds its context
/// strongly and is held weakly by it.
public final class FetchedResultsController {
    /// What is fetched: its entity, predicate and sort descriptors (required). `fetchLimit`
    /// caps the objects also as they change; `fetchOffset` applies to ``performFetch()`` only.
    public let fetchRequest: FetchRequest
    /// The context fetched from and followed.
    public let context: ManagedObjectContext
    /// The key path (`location.label`) whose value names each object's section; nil for one
    /// section named "". Objects of a section must be next to each other in the sort order,
    /// as in Core Data: the first sort descriptor should order by the same key.
    public let sectionNameKeyPath: String?
    /// Called with the changes of each update of the results (not for ``performFetch()``),
    /// on the context's queue.
    public var onChange: ((Changes) -> Void)?

    /// The objects fetched, in order; nil before ``performFetch()``.
    public private(set) var fetchedObjects: [ManagedObject]?
    /// The sections, in order; nil before ``performFetch()``.
    public private(set) var sections: [Section]?
    /// The results as section names and object IDs; empty before ``performFetch()``.
    public var snapshot: Snapshot {
        Snapshot(sections: (sections ?? []).map { Snapshot.Section(name: $0.name, objectIDs: $0.objects.map(\.objectID)) })
    }

    /// The entities whose objects can be results.
    private let entityNames: Set<String>
    private var lastSnapshot = Snapshot(sections: [])

    /// Creates a controller; nothing is fetched until ``performFetch()``.
    ///
    /// - Throws: ``FetchRequestError`` when the request has no sort descriptors (the controller
    ///   needs an order, as Core Data's does) or its entity is not in the model.
    public init(fetchRequest: FetchRequest, context: ManagedObjectContext, sectionNameKeyPath: String? = nil) throws {
        guard !fetchRequest.sortDescriptors.isEmpty else {
            throw FetchRequestError("a fetched-results controller needs a fetch request with at least one sort descriptor (entity \(fetchRequest.entityName))")
        }
        guard let entity = context.coordinator.model.entity(named: fetchRequest.entityName) else {
            throw FetchRequestError("entity \(fetchRequest.entityName) not found in the model")
        }
        self.fetchRequest = fetchRequest
        self.context = context
        self.sectionNameKeyPath = sectionNameKeyPath
        let model = context.coordinator.model
        self.entityNames = Set(fetchRequest.includesSubentities ? model.entityAndDescendants(of: entity).map(\.name) : [entity.name])
        context.addInternalObserver(self)
    }

    /// Fetches the results (with the context's pending changes) and builds the sections; from
    /// now on the controller follows the context. ``onChange`` is not called.
    ///
    /// - Throws: as ``ManagedObjectContext/fetch(_:)-(FetchRequest)``.
    public func performFetch() throws {
        let objects = try context.fetchObjects(fetchRequest)
        fetchedObjects = objects
        sections = makeSections(objects)
        lastSnapshot = snapshot
    }

    /// The object at an index path (`[section, row]`).
    ///
    /// - Precondition: the index path is within the sections (as with Core Data's, a wrong
    ///   one is a programming error).
    public func object(at indexPath: IndexPath) -> ManagedObject {
        precondition(indexPath.count == 2, "an index path of a fetched-results controller is [section, row], got \(indexPath)")
        guard let sections, sections.indices.contains(indexPath[0]), sections[indexPath[0]].objects.indices.contains(indexPath[1]) else {
            preconditionFailure("index path \(indexPath) out of the fetched results (\(sections?.map(\.numberOfObjects) ?? []) objects by section)")
        }
        return sections[indexPath[0]].objects[indexPath[1]]
    }

    /// The index path (`[section, row]`) of an object in the results; nil when it is not one.
    public func indexPath(forObject object: ManagedObject) -> IndexPath? {
        guard let sections else { return nil }
        for (s, section) in sections.enumerated() {
            if let row = section.objects.firstIndex(where: { $0 === object }) { return [s, row] }
        }
        return nil
    }

    // MARK: Types

    /// A section of the results (Core Data's `NSFetchedResultsSectionInfo`).
    public struct Section {
        /// The section's name: the string form of the section key path's value ("" for nil).
        public var name: String
        /// The objects of the section, in order.
        public var objects: [ManagedObject]
        /// The number of objects.
        public var numberOfObjects: Int { objects.count }
        /// The section index title: the name's first letter, uppercased (nil for an empty name).
        public var indexTitle: String? { name.first.map { String($0).uppercased() } }
    }

    /// The kind of an object change (Core Data's `NSFetchedResultsChangeType`).
    public enum ChangeType: String, Sendable, Hashable {
        /// A new result: ``Change/newIndexPath``.
        case insert
        /// A result gone: ``Change/indexPath`` (before the change).
        case delete
        /// A result that changed place: ``Change/indexPath`` before, ``Change/newIndexPath`` after.
        case move
        /// A result whose values changed and that kept its place: ``Change/indexPath`` before,
        /// ``Change/newIndexPath`` after (they differ only by the inserts and deletes around it).
        case update
    }

    /// One object's change.
    public struct Change: Sendable, Hashable, CustomStringConvertible {
        /// The kind of change.
        public var type: ChangeType
        /// The object (its ID after the change).
        public var objectID: ManagedObjectID
        /// Where the object was (nil for an insert).
        public var indexPath: IndexPath?
        /// Where the object is (nil for a delete).
        public var newIndexPath: IndexPath?

        /// `insert [0, 2]`, `move [1, 0] → [0, 3]`.
        public var description: String {
            func text(_ path: IndexPath?) -> String { path.map { "[\($0.map(String.init).joined(separator: ", "))]" } ?? "-" }
            switch type {
            case .insert: return "insert \(text(newIndexPath))"
            case .delete: return "delete \(text(indexPath))"
            case .move: return "move \(text(indexPath)) → \(text(newIndexPath))"
            case .update: return "update \(text(indexPath))"
            }
        }
    }

    /// A section inserted or deleted.
    public struct SectionChange: Sendable, Hashable, CustomStringConvertible {
        /// `.insert` or `.delete`.
        public var type: ChangeType
        /// The section's name.
        public var name: String
        /// Its index: after the change for an insert, before it for a delete.
        public var index: Int

        /// `insert section 1 "Garage"`.
        public var description: String { "\(type.rawValue) section \(index) \"\(name)\"" }
    }

    /// The results as values: section names and object IDs, in order (as a diffable data
    /// source takes them).
    public struct Snapshot: Sendable, Hashable {
        /// One section.
        public struct Section: Sendable, Hashable {
            /// The section's name.
            public var name: String
            /// The IDs of its objects, in order.
            public var objectIDs: [ManagedObjectID]
        }

        /// The sections, in order.
        public var sections: [Section]
        /// The names of the sections.
        public var sectionIdentifiers: [String] { sections.map(\.name) }
        /// Every object ID, section after section.
        public var itemIdentifiers: [ManagedObjectID] { sections.flatMap(\.objectIDs) }
    }

    /// The changes of one update: sections deleted and inserted, then objects deleted,
    /// inserted, moved and updated (each list in index-path order), and the new results.
    public struct Changes: Sendable, Hashable {
        /// Sections deleted (indexes before) and inserted (indexes after).
        public var sectionChanges: [SectionChange]
        /// Objects deleted, inserted, moved and updated.
        public var objectChanges: [Change]
        /// The results after the changes.
        public var snapshot: Snapshot
    }

    // MARK: Following the context

    /// The results after an objects-did-change: removed objects out, inserted and changed
    /// objects of the entity matched again, the whole sorted.
    private func update(with objects: ChangedObjects) {
        guard let current = fetchedObjects else { return }
        if objects.invalidatedAll != nil {
            let old = sections ?? []
            fetchedObjects = (try? context.fetchObjects(fetchRequest)) ?? []
            sections = makeSections(fetchedObjects ?? [])
            report(from: old, changed: [])
            return
        }
        var gone = Set(objects.deleted.map(ObjectIdentifier.init))
        for object in objects.invalidated { gone.insert(ObjectIdentifier(object)) }
        var changed: Set<ObjectIdentifier> = []
        var candidates: [ManagedObject] = []
        for set in [objects.inserted, objects.updated, objects.refreshed] {
            for object in set where entityNames.contains(object.entity.name) {
                changed.insert(ObjectIdentifier(object))
                candidates.append(object)
            }
        }
        guard !gone.isEmpty || !candidates.isEmpty else { return }
        var list: [ManagedObject] = []
        var present: Set<ObjectIdentifier> = []
        for object in current where !gone.contains(ObjectIdentifier(object)) && object.belongs(to: context) {
            if changed.contains(ObjectIdentifier(object)), !matches(object) { continue }
            list.append(object)
            present.insert(ObjectIdentifier(object))
        }
        for object in ManagedObjectContext.inSaveOrder(candidates) where !present.contains(ObjectIdentifier(object)) && matches(object) {
            list.append(object)
            present.insert(ObjectIdentifier(object))
        }
        list = (try? list.sorted(by: fetchRequest.sortDescriptors)) ?? list
        if fetchRequest.fetchLimit > 0, list.count > fetchRequest.fetchLimit { list = Array(list.prefix(fetchRequest.fetchLimit)) }
        let old = sections ?? []
        fetchedObjects = list
        sections = makeSections(list)
        report(from: old, changed: changed)
    }

    private func matches(_ object: ManagedObject) -> Bool {
        guard !object.isDeleted, object.belongs(to: context) else { return false }
        guard let predicate = fetchRequest.predicate else { return true }
        return (try? predicate.evaluate(with: object)) ?? false
    }

    private func makeSections(_ objects: [ManagedObject]) -> [Section] {
        guard let sectionNameKeyPath else { return objects.isEmpty ? [] : [Section(name: "", objects: objects)] }
        var sections: [Section] = []
        var index: [String: Int] = [:]
        for object in objects {
            let name = Self.sectionName(object.value(forKeyPath: sectionNameKeyPath))
            if let i = index[name] {
                sections[i].objects.append(object)
            } else {
                index[name] = sections.count
                sections.append(Section(name: name, objects: [object]))
            }
        }
        return sections
    }

    /// A section name from a key path's value: strings as they are, objects by URI, other
    /// values by their description, nil as "".
    static func sectionName(_ value: Any?) -> String {
        switch value {
        case nil: return ""
        case let string as String: return string
        case let object as ManagedObject: return object.objectID.uriRepresentation
        case let value?: return "\(value)"
        }
    }

    /// Compares the sections before and after and reports the differences.
    private func report(from old: [Section], changed: Set<ObjectIdentifier>) {
        let new = sections ?? []
        var changes = Self.difference(from: old, to: new, changed: changed)
        let snapshot = self.snapshot
        lastSnapshot = snapshot
        guard !changes.sectionChanges.isEmpty || !changes.objectChanges.isEmpty else { return }
        changes.snapshot = snapshot
        onChange?(changes)
    }

    /// The section and object changes that turn `old` into `new`. Of the objects in both,
    /// those that change section move; in each section, those that keep their order
    /// relative to each other stay (the run in order with the most unchanged objects, then
    /// the most changed ones) and the others move. Those that stay and changed are updates.
    /// Objects of a section deleted or inserted are reported too (as moves, deletes or
    /// inserts), so that the changes alone carry every object.
    static func difference(from old: [Section], to new: [Section], changed: Set<ObjectIdentifier>) -> Changes {
        var sectionChanges: [SectionChange] = []
        let oldNames = Set(old.map(\.name)), newNames = Set(new.map(\.name))
        for (i, section) in old.enumerated() where !newNames.contains(section.name) {
            sectionChanges.append(SectionChange(type: .delete, name: section.name, index: i))
        }
        for (i, section) in new.enumerated() where !oldNames.contains(section.name) {
            sectionChanges.append(SectionChange(type: .insert, name: section.name, index: i))
        }
        var oldPlace: [ObjectIdentifier: (path: IndexPath, section: String)] = [:]
        for (s, section) in old.enumerated() {
            for (r, object) in section.objects.enumerated() { oldPlace[ObjectIdentifier(object)] = ([s, r], section.name) }
        }
        var deletes: [Change] = [], inserts: [Change] = [], moves: [Change] = [], updates: [Change] = []
        var newIDs: Set<ObjectIdentifier> = []
        for (s, section) in new.enumerated() {
            // Objects that were in the section of this name before: those that keep their
            // order relative to each other stay, unchanged ones first; the others move.
            var survivors: [(object: ManagedObject, old: IndexPath, new: IndexPath)] = []
            for (r, object) in section.objects.enumerated() {
                let id = ObjectIdentifier(object)
                newIDs.insert(id)
                guard let place = oldPlace[id] else {
                    inserts.append(Change(type: .insert, objectID: object.objectID, indexPath: nil, newIndexPath: [s, r]))
                    continue
                }
                if place.section == section.name {
                    survivors.append((object, place.path, [s, r]))
                } else {
                    moves.append(Change(type: .move, objectID: object.objectID, indexPath: place.path, newIndexPath: [s, r]))
                }
            }
            let bound = (survivors.map { $0.old[1] }.max() ?? 0) + 1
            let weights = survivors.map { changed.contains(ObjectIdentifier($0.object)) ? 1 : survivors.count + 1 }
            let staying = heaviestIncreasingRun(survivors.map { $0.old[1] }, weights: weights, bound: bound)
            for (i, survivor) in survivors.enumerated() {
                if !staying.contains(i) {
                    moves.append(Change(type: .move, objectID: survivor.object.objectID, indexPath: survivor.old, newIndexPath: survivor.new))
                } else if changed.contains(ObjectIdentifier(survivor.object)) {
                    updates.append(Change(type: .update, objectID: survivor.object.objectID, indexPath: survivor.old, newIndexPath: survivor.new))
                }
            }
        }
        for (s, section) in old.enumerated() {
            for (r, object) in section.objects.enumerated() where !newIDs.contains(ObjectIdentifier(object)) {
                deletes.append(Change(type: .delete, objectID: object.objectID, indexPath: [s, r], newIndexPath: nil))
            }
        }
        moves.sort { ($0.newIndexPath ?? []) < ($1.newIndexPath ?? []) }
        return Changes(sectionChanges: sectionChanges, objectChanges: deletes + inserts + moves + updates, snapshot: Snapshot(sections: []))
    }

    /// The positions of a heaviest strictly increasing subsequence of `values` (distinct
    /// integers in `0..<bound`), in O(n log n) with a Fenwick tree of prefix maxima.
    static func heaviestIncreasingRun(_ values: [Int], weights: [Int], bound: Int) -> Set<Int> {
        // tree[k]: the best (total weight, last position) of runs ending at a value <= k-1 in its range.
        var tree = [(weight: Int, position: Int)](repeating: (0, -1), count: bound + 1)
        var previous = [Int](repeating: -1, count: values.count)
        var total = [Int](repeating: 0, count: values.count)
        var best = (weight: 0, position: -1)
        for (i, value) in values.enumerated() {
            var k = value  // values below `value`: tree indexes 1...value
            var before = (weight: 0, position: -1)
            while k > 0 {
                if tree[k].weight > before.weight { before = tree[k] }
                k -= k & -k
            }
            total[i] = before.weight + weights[i]
            previous[i] = before.position
            if total[i] > best.weight { best = (total[i], i) }
            k = value + 1
            while k <= bound {
                if total[i] > tree[k].weight { tree[k] = (total[i], i) }
                k += k & -k
            }
        }
        var result: Set<Int> = []
        var i = best.position
        while i >= 0 {
            result.insert(i)
            i = previous[i]
        }
        return result
    }
}

extension FetchedResultsController: ContextObserver {
    func context(_ context: ManagedObjectContext, didAnnounce kind: ContextChange.Kind, _ objects: ChangedObjects) {
        switch kind {
        case .objectsDidChange:
            update(with: objects)
        case .didSave:
            // Saved objects got permanent IDs: the snapshot says so.
            guard fetchedObjects != nil else { return }
            let snapshot = self.snapshot
            guard snapshot != lastSnapshot else { return }
            lastSnapshot = snapshot
            onChange?(Changes(sectionChanges: [], objectChanges: [], snapshot: snapshot))
        case .willSave:
            return
        }
    }
}
