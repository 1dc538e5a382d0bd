import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Delete rules on save: cascade and nullify, with the SQL they run. (Deny: `SaveModelTests`.)
@Suite struct DeleteRuleTests {
    @Test func deleteCascadesAndNullifies() throws {
        let url = try SaveTests.copyOfInventory()
        let (context, sql) = try SaveTests.open(url)
        let mug = context.object(with: ManagedObjectID(entityName: "Asset", storeIdentifier: context.coordinator.store.identifier, primaryKey: 1))
        let basement = context.object(with: ManagedObjectID(entityName: "Location", storeIdentifier: context.coordinator.store.identifier, primaryKey: 1))
        context.delete(mug)
        try context.processPendingChanges()
        #expect(context.deletedObjects.map(\.objectID.primaryKey).sorted() == [1, 1, 6])  // the mug and inventories 1 and 6
        sql.clear()
        try context.save()
        // The locations lose an inventory each (nullified inverse): version-checked.
        #expect(sql.sql == [
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZLOCATION t0 WHERE  t0.Z_PK = ?",
            "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZLABEL FROM ZLOCATION t0 WHERE  t0.Z_PK = ?",
            "BEGIN EXCLUSIVE",
            "UPDATE ZLOCATION SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "UPDATE ZLOCATION SET Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?",
            "DELETE FROM ZASSET WHERE Z_PK = ? AND Z_OPT = ?",
            "DELETE FROM ZINVENTORY WHERE Z_PK = ? AND Z_OPT = ?",
            "DELETE FROM ZINVENTORY WHERE Z_PK = ? AND Z_OPT = ?",
            "COMMIT",
        ])
        #expect(sql.arguments[5] == [1, 1] && sql.arguments[6] == [1, 1] && sql.arguments[7] == [6, 1])
        #expect((basement.value(forKey: "inventories") as? [ManagedObject])?.map(\.objectID.primaryKey) == [2, 3])
        let raw = try Connection(path: url.path, mode: .readWrite)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZINVENTORY") == 6)
        #expect(try raw.scalar("SELECT COUNT(*) FROM ZASSET WHERE Z_PK = 1") == 0)
    }
}
