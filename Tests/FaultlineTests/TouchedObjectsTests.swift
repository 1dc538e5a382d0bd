import FaultlineModel
import FaultlineTestSupport
import Testing

@testable import Faultline

/// A context's touched objects (`TouchedObjects`) answer as an ordered set would — each
/// object once, in the order first added — through any run of additions, removals (which
/// leave stale entries behind), additions of removed objects and clearings: checked against
/// an array, step by step. The object's own marks must agree with the answer.
@Suite struct TouchedObjectsTests {
    private static let entity = EntityDescription(name: "Thing")

    @Test(arguments: [1, 2, 3, 4])
    func touchedObjectsAnswerAsAnOrderedSetThroughEveryChange(seed: UInt64) {
        var random = SeededRandom(state: seed)
        let names = ObjectIDNames.number(entityName: "Thing", storeIdentifier: "TOUCHED-TEST")
        let pool = (1...60).map { ManagedObject(entity: Self.entity, objectID: ManagedObjectID(names: names, primaryKey: Int64($0)), context: nil, isFault: true) }
        var touched = TouchedObjects()
        var model: [ManagedObject] = []
        for step in 0..<5000 {
            let object = pool[random.int(0...(pool.count - 1))]
            switch random.int(0...19) {
            case 0:
                touched.removeAll()
                model.removeAll()
            case 1...8:
                touched.remove(object)
                model.removeAll { $0 === object }
            default:
                touched.insert(object)
                if !model.contains(where: { $0 === object }) { model.append(object) }
            }
            #expect(touched.count == model.count, "step \(step)")
            #expect(touched.isEmpty == model.isEmpty, "step \(step)")
            let objects = touched.objects
            #expect(objects.count == model.count && zip(objects, model).allSatisfy { $0 === $1 }, "step \(step): order or members differ")
            let divisor = Int64(step % 5 + 2)
            #expect(touched.first { $0.objectID.primaryKey % divisor == 0 } === model.first { $0.objectID.primaryKey % divisor == 0 }, "step \(step)")
            #expect(touched.contains { $0.objectID.primaryKey == 7 } == model.contains { $0.objectID.primaryKey == 7 }, "step \(step)")
            for candidate in pool {
                #expect(touched.contains(candidate) == model.contains { $0 === candidate }, "step \(step): \(candidate.objectID.primaryKey)")
            }
        }
        touched.removeAll()
        #expect(pool.allSatisfy { $0.contextMarks == 0 }, "marks left on objects after removeAll")
    }

    /// The marks share a byte with the observation state, which they must not disturb.
    @Test func touchedMarksLeaveTheObservationStateAlone() {
        let object = ManagedObject(entity: Self.entity, objectID: ManagedObjectID(temporaryFor: "Thing"), context: nil, isFault: true)
        var touched = TouchedObjects()
        for state in [nil, false, true] as [Bool?] {
            object.wasVisibleBeforeEvent = state
            touched.insert(object)
            #expect(object.wasVisibleBeforeEvent == state)
            touched.remove(object)
            #expect(object.wasVisibleBeforeEvent == state)
            #expect(!touched.contains(object))
            touched.insert(object)
            #expect(touched.contains(object) && touched.count == 1)
            touched.removeAll()
            #expect(object.wasVisibleBeforeEvent == state)
        }
    }
}
