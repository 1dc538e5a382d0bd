import FaultlineModel
import FaultlineTestSupport
import Foundation
import Testing

@testable import Faultline

/// The context's object table (`ObjectRegistry`) answers as a dictionary would, whatever
/// the order of insertions, look-ups and removals: checked against one, step by step, over
/// keys that crowd into the same buckets (consecutive keys share a hash group, several
/// entities, temporary IDs) so that removals move entries back.
@Suite struct ObjectRegistryTests {
    private static let entity = EntityDescription(name: "Thing")
    private static let names: [UInt32] = ["Thing", "Other", "Third"].map { ObjectIDNames.number(entityName: $0, storeIdentifier: "REGISTRY-TEST") }

    private static func id(_ random: inout SeededRandom) -> ManagedObjectID {
        if random.int(0...19) == 0 { return ManagedObjectID(names: names[0], temporaryNumber: UInt64(random.int(1...300))) }
        return ManagedObjectID(names: names[random.int(0...2)], primaryKey: Int64(random.int(0...299)))
    }

    private static func object(_ id: ManagedObjectID) -> ManagedObject {
        ManagedObject(entity: entity, objectID: id, context: nil, isFault: true)
    }

    private static func expectSame(_ registry: ObjectRegistry, _ model: [ManagedObjectID: ManagedObject], step: Int) {
        #expect(registry.count == model.count, "step \(step)")
        for (id, object) in model { #expect(registry[id] === object, "step \(step): \(id)") }
        #expect(Set(registry.keys) == Set(model.keys), "step \(step)")
        #expect(Set(registry.values.map(ObjectIdentifier.init)) == Set(model.values.map(ObjectIdentifier.init)), "step \(step)")
    }

    /// Each object made, held weakly: none may outlive the table and the model (a reference
    /// the table kept too many) or go before them (one it let go of too many, which the
    /// look-ups would find freed).
    private final class Made {
        private var objects: [Weak] = []
        private struct Weak { weak var object: ManagedObject? }
        func track(_ object: ManagedObject) -> ManagedObject {
            objects.append(Weak(object: object))
            return object
        }
        var alive: Int { objects.count { $0.object != nil } }
    }

    @Test(arguments: [1, 2, 3, 4])
    func aRegistryAnswersAsADictionaryThroughEveryChange(seed: UInt64) {
        let made = Made()
        do {
            Self.run(seed: seed, made: made)
        }
        #expect(made.alive == 0, "objects outlived the table and the model")
    }

    private static func run(seed: UInt64, made: Made) {
        var random = SeededRandom(state: seed)
        let registry = ObjectRegistry(seed: Int(truncatingIfNeeded: seed &* 0x9E37_79B9))
        var model: [ManagedObjectID: ManagedObject] = [:]
        var seen: [ManagedObjectID] = []
        func object(_ id: ManagedObjectID) -> ManagedObject { made.track(Self.object(id)) }
        for step in 0..<4000 {
            let id = seen.isEmpty || random.int(0...2) == 0 ? Self.id(&random) : seen[random.int(0...(seen.count - 1))]
            seen.append(id)
            switch random.int(0...9) {
            case 0...2:  // look up, then register where the look-up stopped
                let (found, probe) = registry.lookUp(id)
                #expect(found === model[id], "step \(step)")
                if found == nil {
                    let object = object(id)
                    registry.register(object, for: id, at: probe)
                    model[id] = object
                }
            case 3:  // the table changed between look-up and registration
                let (found, probe) = registry.lookUp(id)
                for _ in 0..<random.int(0...3) {
                    // Removals move entries (the probe is stale); registrations fill buckets,
                    // the probe's own maybe, or register the ID itself.
                    let other = random.int(0...3) == 0 ? id : Self.id(&random)
                    if model[other] != nil, random.int(0...1) == 0 {
                        registry[other] = nil
                        model[other] = nil
                    } else {
                        let made = object(other)
                        registry[other] = made
                        model[other] = made
                    }
                }
                if found == nil {
                    let object = object(id)
                    registry.register(object, for: id, at: probe)
                    model[id] = object
                }
            case 4...5:
                let object = object(id)
                #expect(registry.updateValue(object, forKey: id) === model.updateValue(object, forKey: id), "step \(step)")
            case 6...7:
                #expect(registry.removeValue(forKey: id) === model.removeValue(forKey: id), "step \(step)")
            case 8:
                // Held by the table alone once the model lets go of it: removed.
                let present = model.removeValue(forKey: id) != nil
                #expect(registry.removeIfUniquelyReferenced(id) == present, "step \(step)")
            default:
                if random.int(0...59) == 0 {
                    registry.removeAll()
                    model.removeAll()
                } else if random.int(0...19) == 0 {
                    registry.filter(reservingExtra: random.int(0...50)) { !$0.isTemporaryID }
                    model = model.filter { !$0.key.isTemporaryID }
                }
            }
            if step % 97 == 0 { Self.expectSame(registry, model, step: step) }
        }
        Self.expectSame(registry, model, step: -1)
    }

    /// In a table of eight buckets most IDs collide: a probe taken before other IDs were
    /// registered or removed still puts its ID where look-ups find it.
    @Test func aProbeSurvivesRegistrationsAndIsRedoneAfterRemovals() {
        var random = SeededRandom(state: 0xB0B)
        for trial in 0..<3000 {
            let registry = ObjectRegistry(seed: trial)
            var model: [ManagedObjectID: ManagedObject] = [:]
            for _ in 0..<random.int(1...3) {
                let id = Self.id(&random)
                let object = Self.object(id)
                registry[id] = object
                model[id] = object
            }
            let id = Self.id(&random)
            let (found, probe) = registry.lookUp(id)
            guard found == nil else { continue }
            if let other = model.keys.sorted(by: { $0.uriRepresentation < $1.uriRepresentation }).randomElement(using: &random), random.int(0...1) == 0 {
                registry[other] = nil
                model[other] = nil
            } else if model.count < 3 {
                let other = Self.id(&random)
                let object = Self.object(other)
                registry[other] = object
                model[other] = object
            }
            let object = Self.object(id)
            registry.register(object, for: id, at: probe)
            model[id] = object
            #expect(registry.count == model.count, "trial \(trial)")
            for (id, object) in model { #expect(registry[id] === object, "trial \(trial): \(id)") }
        }
    }

    @Test func anObjectHeldElsewhereStaysRegistered() {
        let registry = ObjectRegistry()
        let id = ManagedObjectID(names: Self.names[0], primaryKey: 7)
        do {
            let held = Self.object(id)
            registry[id] = held
            #expect(!registry.removeIfUniquelyReferenced(id))
            #expect(registry[id] === held && registry.count == 1)
        }
        #expect(registry.removeIfUniquelyReferenced(id))
        #expect(registry[id] == nil && registry.isEmpty)
    }

    /// A borrowed entry (`register(_:for:at:borrowing:)`, a batch's objects) takes no
    /// reference: its holder's counts. Ending the borrow removes the entry or gives it a
    /// reference of its own; an entry that goes first (a replacement, a removal, a filter, an
    /// emptying) only clears the object's mark, letting go of nothing.
    @Test func aBorrowedEntryHoldsNoReferenceOfItsOwn() {
        let registry = ObjectRegistry()
        registry.reserveCapacity(64)
        func id(_ key: Int64) -> ManagedObjectID { ManagedObjectID(names: Self.names[0], primaryKey: key) }
        func borrowed(_ key: Int64) -> ManagedObject {
            let object = Self.object(id(key))
            let (found, probe) = registry.lookUp(id(key))
            #expect(found == nil)
            registry.register(object, for: id(key), at: probe, borrowing: true)
            #expect(object.isBorrowedByRegistry && registry[id(key)] === object)
            return object
        }
        weak var removed: ManagedObject?
        weak var adopted: ManagedObject?
        weak var replaced: ManagedObject?
        weak var taken: ManagedObject?
        weak var filtered: ManagedObject?
        weak var emptied: ManagedObject?
        do {
            var one: ManagedObject? = borrowed(1)
            removed = one
            #expect(isKnownUniquelyReferenced(&one), "the entry took no reference")
            registry.endBorrow(of: one.unsafelyUnwrapped, removing: true)
            #expect(registry[id(1)] == nil && one?.isBorrowedByRegistry == false)
            one = nil
            #expect(removed == nil)
            let two = borrowed(2)
            adopted = two
            registry.endBorrow(of: two, removing: false)
            #expect(!two.isBorrowedByRegistry)
        }
        #expect(adopted != nil && registry[id(2)] === adopted, "kept by a reference of its own")
        do {
            let three = borrowed(3)
            replaced = three
            #expect(registry.updateValue(Self.object(id(3)), forKey: id(3)) === three && !three.isBorrowedByRegistry)
            let four = borrowed(4)
            taken = four
            #expect(registry.removeValue(forKey: id(4)) === four && !four.isBorrowedByRegistry)
            let five = borrowed(5)
            filtered = five
            #expect(!registry.removeIfUniquelyReferenced(id(5)), "its holder decides")
            registry.filter(reservingExtra: 0) { $0.primaryKey != 5 }
            #expect(!five.isBorrowedByRegistry && registry[id(5)] == nil)
            let six = borrowed(6)
            emptied = six
            registry.removeAll()
            #expect(!six.isBorrowedByRegistry && registry.isEmpty)
            registry.endBorrow(of: six, removing: true)  // its entry went: nothing to end
        }
        #expect(replaced == nil && taken == nil && filtered == nil && emptied == nil, "each let go of once, by its holder")
    }

    /// The table counts its borrowed entries, every way a borrow ends: once none is left, an
    /// entry that goes is released without a look at its object's mark, so the count must
    /// never be short of the marks (an entry released that only borrowed its reference would
    /// free its holder's object under it).
    @Test func theTableCountsItsBorrowedEntries() {
        weak var owned: ManagedObject?
        weak var lent: ManagedObject?
        var holder: ManagedObject?
        do {
            let registry = ObjectRegistry()
            registry.reserveCapacity(16)  // a registration that grows the table takes a reference
            func id(_ key: Int64) -> ManagedObjectID { ManagedObjectID(names: Self.names[0], primaryKey: key) }
            func register(_ key: Int64, borrowing: Bool) -> ManagedObject {
                let object = Self.object(id(key))
                registry.register(object, for: id(key), at: registry.lookUp(id(key)).probe, borrowing: borrowing)
                return object
            }
            let objects = (1...6).map { register(Int64($0), borrowing: true) }
            #expect(registry.borrowedEntries == 6)
            registry.endBorrow(of: objects[0], removing: false)  // the table takes a reference
            registry.endBorrow(of: objects[1], removing: true)  // the entry goes
            #expect(registry.removeValue(forKey: id(3)) === objects[2])
            registry.updateValue(Self.object(id(4)), forKey: id(4))  // replaced
            registry.filter(reservingExtra: 0) { $0.primaryKey != 5 }
            #expect(registry.borrowedEntries == 1 && objects[5].isBorrowedByRegistry)
            registry.removeAll()
            #expect(registry.borrowedEntries == 0 && objects.allSatisfy { !$0.isBorrowedByRegistry })
            // A table with no borrowed entry left releases what it holds when it goes; one
            // that still borrows leaves the borrowed object to its holder.
            owned = register(7, borrowing: false)
            holder = register(8, borrowing: true)
            lent = holder
            #expect(registry.borrowedEntries == 1)
        }
        #expect(owned == nil, "the table's reference went with it")
        #expect(lent != nil && holder?.isBorrowedByRegistry == false, "the holder's reference is whole")
        holder = nil
        #expect(lent == nil)
    }

    /// The table holds its objects, lets go of them when it is emptied or goes, and a growing
    /// table keeps every entry.
    @Test func theTableHoldsItsObjectsUntilItLetsGoOfThem() {
        weak var first: ManagedObject?
        weak var last: ManagedObject?
        do {
            let registry = ObjectRegistry()
            registry.reserveCapacity(10)
            for key in Int64(1)...1000 {
                let id = ManagedObjectID(names: Self.names[1], primaryKey: key)
                let (found, probe) = registry.lookUp(id)
                #expect(found == nil)
                let object = Self.object(id)
                registry.register(object, for: id, at: probe)
                if key == 1 { first = object }
                if key == 1000 { last = object }
            }
            #expect(registry.count == 1000 && first != nil && last != nil)
            #expect((Int64(1)...1000).allSatisfy { registry[ManagedObjectID(names: Self.names[1], primaryKey: $0)]?.objectID.primaryKey == $0 })
            registry.removeAll()
            #expect(first == nil && registry.isEmpty)
            let id = ManagedObjectID(names: Self.names[1], primaryKey: 1000)
            let kept = Self.object(id)
            last = kept
            registry[id] = kept
        }
        #expect(last == nil)
    }

    /// A large table, emptied when its registry goes or is emptied, is kept for the next
    /// registry of its size (`ObjectRegistry.spareTables`): that registry starts empty — no ID
    /// of the last one found, no object of it kept alive — whatever the last one did (IDs
    /// removed, entries moved back, objects held elsewhere).
    @Test func aLargeTableKeptForReuseComesBackEmpty() {
        let reusesBefore = ObjectRegistry.spareTables.reuses
        let made = Made()
        var heldElsewhere: [ManagedObject] = []
        var previous: [ManagedObjectID] = []
        for round in 0..<4 {
            let registry = ObjectRegistry()
            registry.reserveCapacity(20_000)  // 65,536 buckets: a table kept for reuse
            #expect(registry.isEmpty && registry.values.isEmpty, "round \(round)")
            #expect(previous.allSatisfy { registry[$0] == nil }, "round \(round): an ID of the last registry found")
            previous = []
            for key in Int64(1)...20_000 {
                let id = ManagedObjectID(names: Self.names[round % 3], primaryKey: key &* 7 &+ Int64(round))
                let object = made.track(Self.object(id))
                registry[id] = object
                previous.append(id)
                if key % 1000 == 0 { heldElsewhere.append(object) }
            }
            for id in previous where id.primaryKey % 5 == 0 { registry[id] = nil }
            #expect(registry.count == previous.count { $0.primaryKey % 5 != 0 }, "round \(round)")
            if round == 2 { registry.removeAll() }
        }
        heldElsewhere.removeAll()
        #expect(made.alive == 0, "objects outlived the registries")
        #expect(ObjectRegistry.spareTables.reuses > reusesBefore, "no registry took the kept table")
    }

    /// An object whose deinit ends the borrows of others: results held by an object, going
    /// with it, end their batch's borrows so (`FetchedResults.deinit`).
    private final class EndsBorrowsWhenFreed: ManagedObject {
        var whenFreed: (() -> Void)?
        deinit { whenFreed?() }
    }

    /// An object freed while its table empties may end the borrows of entries of that same
    /// table (its deinit lets go of a batch's results): every entry is emptied and every
    /// borrow ended before anything is released, so nothing is counted twice — the borrowed
    /// count taken below the marks would later release a reference the table only borrowed.
    @Test(arguments: [8, ObjectRegistry.releasedInAddressOrder + 8])
    func aDeinitEndingBorrowsWhileTheTableEmptiesCountsNothingTwice(objects: Int) {
        for seed in 0..<8 {
            let registry = ObjectRegistry(seed: seed)
            registry.reserveCapacity(objects * 2)
            func id(_ key: Int) -> ManagedObjectID { ManagedObjectID(names: Self.names[1], primaryKey: Int64(key)) }
            var holders: [ManagedObject] = []
            for key in 1..<objects {
                let object = Self.object(id(key))
                registry.register(object, for: id(key), at: registry.lookUp(id(key)).probe, borrowing: true)
                holders.append(object)
            }
            do {
                let ender = EndsBorrowsWhenFreed(entity: Self.entity, objectID: id(objects), context: nil, isFault: true)
                let lent = holders
                ender.whenFreed = { for object in lent { registry.endBorrow(of: object, removing: false) } }
                registry.register(ender, for: id(objects), at: registry.lookUp(id(objects)).probe)  // only the table holds it
            }
            registry.removeAll()
            #expect(registry.borrowedEntries == 0, "seed \(seed): borrows counted twice")
            #expect(holders.allSatisfy { !$0.isBorrowedByRegistry }, "seed \(seed)")
            for index in holders.indices { #expect(isKnownUniquelyReferenced(&holders[index]), "seed \(seed): a reference left behind") }
        }
    }

    /// A table of many objects lets go of them in the order of their addresses, not its own
    /// (`releaseAndEmpty`, from 4,096 objects): each reference it holds given back once,
    /// whether the table goes or is emptied, and a borrowed entry's object left whole to its
    /// holder. Objects are made in a shuffled order, so their addresses and keys disagree.
    @Test(arguments: [(emptied: false, borrows: true), (emptied: true, borrows: true), (emptied: false, borrows: false)])
    func manyObjectsAreLetGoOfOnceEachInAddressOrder(emptied: Bool, borrows: Bool) {
        let made = Made()
        var holders: [ManagedObject] = []
        var generator = SeededRandom(state: emptied ? 7 : borrows ? 11 : 13)
        do {
            let registry = ObjectRegistry()
            registry.reserveCapacity(ObjectRegistry.releasedInAddressOrder * 2)
            var keys = Array(Int64(1)...Int64(ObjectRegistry.releasedInAddressOrder + 1_000))
            keys.shuffle(using: &generator)
            for key in keys {
                let id = ManagedObjectID(names: Self.names[Int(key % 3)], primaryKey: key)
                let object = made.track(Self.object(id))
                let borrowed = borrows && key % 5 == 0
                registry.register(object, for: id, at: registry.lookUp(id).probe, borrowing: borrowed)
                if borrowed || key % 7 == 0 { holders.append(object) }  // lent, or also held here
            }
            #expect(registry.borrowedEntries == (borrows ? keys.count { $0 % 5 == 0 } : 0))
            if emptied {
                registry.removeAll()
                #expect(registry.isEmpty && registry.borrowedEntries == 0)
            }
        }
        #expect(made.alive == holders.count, "objects only the table held are freed, the others kept")
        #expect(holders.allSatisfy { !$0.isBorrowedByRegistry }, "every borrow ended")
        for index in holders.indices { #expect(isKnownUniquelyReferenced(&holders[index]), "a reference left behind") }
        holders.removeAll()
        #expect(made.alive == 0)
    }

    /// A table of 2 MiB or more comes aligned for huge pages and zeroed by hand (its memory
    /// may be a block the allocator had handed out before): every bucket empty. One of
    /// 1,048,576 buckets (24 MiB) is never a kept table, so it is made here.
    @Test func aHugePageTableStartsEmpty() throws {
        let made = Made()
        for round in 0..<2 {
            // Memory the allocator may hand back dirty: a block larger than the table and its
            // alignment freed (which raises glibc's threshold for fresh mappings to its size),
            // then one of about the table's size from the heap, written over and freed.
            let bytes = (1 << 20) * MemoryLayout<ObjectRegistry.Entry>.stride + (2 << 20)
            free(malloc(bytes + (2 << 20)))
            if let dirty = malloc(bytes) {
                memset(dirty, 0xA5, bytes)
                free(dirty)
            }
            let registry = ObjectRegistry()
            registry.reserveCapacity(300_000)
            // Required: a look-up in a table of garbage would probe forever.
            try #require(registry.everyBucketIsEmpty, "round \(round): a new table holds something")
            #expect(registry.isEmpty && registry.values.isEmpty && registry.keys.isEmpty, "round \(round)")
            for key in Int64(1)...2_000 {
                let id = ManagedObjectID(names: Self.names[round], primaryKey: key &* 131)
                #expect(registry[id] == nil, "round \(round): \(id) found in a new table")
                registry[id] = made.track(Self.object(id))
            }
            #expect(registry.count == 2_000 && registry.values.count == 2_000, "round \(round)")
        }
        #expect(made.alive == 0, "objects outlived the registries")
    }

    /// A new object's value sets are written over without letting go of anything only when
    /// they hold no reference (`ObjectValues.holdsNoReference`, `ManagedObject.setLoadedRow`).
    @Test func valuesHoldNoReferenceOnlyWhenEmptyOfStorage() throws {
        let model = try ManagedObjectModel(entities: [EntityDescription(name: "Thing", attributes: [AttributeDescription(name: "title", type: .string)])])
        let entity = try #require(model.entity(named: "Thing"))
        #expect(entity.propertyLayout.slot(of: "title") != nil)
        var values = ObjectValues(layout: entity.propertyLayout)
        #expect(values.holdsNoReference)
        values["title"] = "a title"
        #expect(!values.holdsNoReference)
        values.removeAll()
        #expect(values.holdsNoReference)
        values["not in the layout"] = 1
        #expect(!values.holdsNoReference, "extra keys are a dictionary")
        let page = RowPage(capacity: 4)
        page.append(.string("row"))
        #expect(!ObjectValues(layout: entity.propertyLayout, page: page, base: 0).holdsNoReference)
    }

    // MARK: A fetch into an empty registry (beginUnindexedFetch)

    private static func fetchID(_ key: Int) -> ManagedObjectID { ManagedObjectID(names: names[2], primaryKey: Int64(key)) }

    /// A registry with a fetch of `rows` rows begun, the objects of `keys` appended to it.
    private static func registry(fetching rows: Int, appended keys: ClosedRange<Int>, made: Made) -> ObjectRegistry {
        let registry = ObjectRegistry()
        #expect(registry.beginUnindexedFetch(rows: rows))
        for key in keys { registry.appendFetched(made.track(object(fetchID(key))), unindexed: true) }
        return registry
    }

    /// A fetch into an empty registry registers its objects through their array: counted at
    /// once, found by every look-up (which puts them in the table then), each held as long
    /// as the registry or the fetch's results are, and let go of once both are gone.
    @Test func aFetchIntoAnEmptyRegistryIsRegisteredThroughItsArray() {
        let made = Made()
        do {
            let registry = ObjectRegistry()
            #expect(!registry.beginUnindexedFetch(rows: 0), "no rows: nothing to begin")
            #expect(registry.beginUnindexedFetch(rows: 300))
            #expect(!registry.beginUnindexedFetch(rows: 300), "a fetch under way: a second one goes one by one")
            for key in 1...300 {
                #expect(registry.isFetchingUnindexed)
                registry.appendFetched(made.track(Self.object(Self.fetchID(key))), unindexed: true)
            }
            var results: [ManagedObject]? = registry.endFetch()
            #expect(results?.map(\.objectID) == (1...300).map(Self.fetchID))
            #expect(registry.count == 300 && !registry.isEmpty && !registry.isFetchingUnindexed)
            #expect(!registry.beginUnindexedFetch(rows: 5), "objects registered: the next fetch goes one by one")
            results = nil
            #expect(made.alive == 300, "the registry holds the fetch's objects without its results")
            for key in 1...300 { #expect(registry[Self.fetchID(key)]?.objectID.primaryKey == Int64(key)) }
            #expect(registry[Self.fetchID(301)] == nil)
            #expect(registry.count == 300 && Set(registry.keys) == Set((1...300).map(Self.fetchID)))
            registry[Self.fetchID(7)] = nil
            #expect(registry.count == 299 && made.alive == 299)
        }
        #expect(made.alive == 0, "objects outlived the registry")
    }

    /// The array's objects stay registered while the fetch's results hold them and the
    /// registry goes, and the other way round; none is let go of twice.
    @Test(arguments: [false, true]) func aFetchedArrayOutlivesWhicheverGoesFirst(registryFirst: Bool) {
        let made = Made()
        var results: [ManagedObject]?
        do {
            let registry = Self.registry(fetching: 50, appended: 1...50, made: made)
            results = registry.endFetch()
            if !registryFirst {
                results = nil
                #expect(made.alive == 50)
                #expect(registry.values.count == 50)
            }
        }
        #expect(made.alive == (registryFirst ? 50 : 0))
        #expect(results?.first?.objectID == (registryFirst ? Self.fetchID(1) : nil))
        results = nil
        #expect(made.alive == 0)
    }

    /// Something that needs the table while a fetch goes on (a look-up from a lifecycle
    /// method) puts the objects appended so far in it; the rest are registered one by one and
    /// still appended, and the fetch returns them all, in order, each registered once.
    @Test func aLookUpDuringAFetchPutsWhatItMadeInTheTable() {
        let made = Made()
        do {
            let registry = Self.registry(fetching: 6, appended: 1...3, made: made)
            // A lifecycle method registers a fault for a later row, looking it up first.
            let (none, probe) = registry.lookUp(Self.fetchID(5))
            #expect(none == nil && !registry.isFetchingUnindexed && registry.count == 3)
            let fault = made.track(Self.object(Self.fetchID(5)))
            registry.register(fault, for: Self.fetchID(5), at: probe)
            for key in 4...6 {
                let (found, probe) = registry.lookUp(Self.fetchID(key))
                if let found {
                    #expect(key == 5 && found === fault)
                    registry.appendFetched(found, unindexed: false)
                } else {
                    let object = made.track(Self.object(Self.fetchID(key)))
                    registry.register(object, for: Self.fetchID(key), at: probe)
                    registry.appendFetched(object, unindexed: false)
                }
            }
            let results = registry.endFetch()
            #expect(results.map(\.objectID) == (1...6).map(Self.fetchID) && results[4] === fault)
            #expect(registry.count == 6 && registry.values.count == 6)
            for (index, object) in results.enumerated() { #expect(registry[Self.fetchID(index + 1)] === object) }
        }
        #expect(made.alive == 0, "objects outlived the registry")
    }

    /// A registry emptied while a fetch goes on (a lifecycle method reset the context) no
    /// longer holds what the fetch made so far, which the fetch still returns; the rest are
    /// registered one by one. Emptied after the fetch, it lets go of the array.
    @Test func aRegistryEmptiedDuringOrAfterAFetch() {
        let made = Made()
        do {
            let registry = Self.registry(fetching: 4, appended: 1...2, made: made)
            registry.removeAll()
            #expect(registry.isEmpty && !registry.isFetchingUnindexed)
            for key in 3...4 {
                let (found, probe) = registry.lookUp(Self.fetchID(key))
                #expect(found == nil)
                let object = made.track(Self.object(Self.fetchID(key)))
                registry.register(object, for: Self.fetchID(key), at: probe)
                registry.appendFetched(object, unindexed: false)
            }
            var results: [ManagedObject]? = registry.endFetch()
            #expect(results?.count == 4 && registry.count == 2 && registry[Self.fetchID(1)] == nil && registry[Self.fetchID(3)] != nil)
            results = nil
            #expect(made.alive == 2)
            registry.removeAll()
            #expect(registry.beginUnindexedFetch(rows: 3))
            for key in 10...12 { registry.appendFetched(made.track(Self.object(Self.fetchID(key))), unindexed: true) }
            results = registry.endFetch()
            registry.removeAll()
            #expect(registry.isEmpty && registry[Self.fetchID(10)] == nil && made.alive == 3)
            results = nil
            #expect(made.alive == 0)
        }
        #expect(made.alive == 0, "objects outlived the registry")
    }

    /// A context's first fetch registers its objects through their array: the context counts
    /// them, finds them by ID, returns the same objects to the next fetch, saves changes to
    /// them, and its objects outlive it in the results (and the other way round).
    @Test func aFreshContextsFetchKeepsUniquingAndChangeTracking() throws {
        let model = try ManagedObjectModel(entities: [EntityDescription(name: "Thing", attributes: [AttributeDescription(name: "title", type: .string)])])
        let coordinator = PersistentStoreCoordinator(store: try SQLiteStore(inMemoryWith: model))
        let writer = ManagedObjectContext(coordinator: coordinator)
        for index in 0..<40 { try writer.insertObject(entityName: "Thing").setValue("thing \(index)", forKey: "title") }
        try writer.save()
        var request = FetchRequest(entityName: "Thing")
        request.sortDescriptors = [FLSortDescriptor(key: "title", ascending: true)]
        weak var firstObject: ManagedObject?
        var kept: FetchedResults<ManagedObject>?
        var renamedTitle: String?
        do {
            let context = ManagedObjectContext(coordinator: coordinator)
            let things = Array(try context.fetch(request))
            firstObject = things.first
            #expect(things.count == 40 && context.registeredObjects.count == 40)
            for thing in things { #expect(context.object(with: thing.objectID) === thing) }
            let again = Array(try context.fetch(request))
            #expect(zip(things, again).allSatisfy { $0 === $1 })
            renamedTitle = things[3].value(forKey: "title") as? String
            try things[3].setValue("renamed", forKey: "title")
            #expect(context.hasChanges && context.updatedObjects.count == 1)
            try context.save()
            kept = try ManagedObjectContext(coordinator: coordinator).fetch(request)
        }
        #expect(firstObject == nil, "the objects went with their context and results")
        let titles = try #require(kept).map { $0.value(forKey: "title") as? String }
        #expect(renamedTitle != nil && titles.count == 40 && titles.contains("renamed") && !titles.contains(renamedTitle))
        #expect(kept?.first?.managedObjectContext == nil, "the context is gone; its objects keep their values")
    }
}
