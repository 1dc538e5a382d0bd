import FaultlineTestSupport
import Foundation
import Testing

/// The shell under input a hostile user or a broken machine gives it: each test is a defect a
/// probe found (a crash, a hang, a silent loss), run as a user would run it.
@Suite struct HostileInputTests {
    static let inventory = TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite")
    static let inventoryModel = TestSupport.inventoryFolder.appendingPathComponent("Inventory.xcdatamodeld")

    /// A copy of the Inventory store alone in a temporary folder.
    static func copyOfInventory() throws -> URL {
        let folder = try TestSupport.temporaryDirectory("hostile")
        let url = folder.appendingPathComponent("s.sqlite")
        try FileManager.default.copyItem(at: inventory, to: url)
        return url
    }

    @Test func aStoreWithUnreadableMetadataOpensReadOnlyAndSaysSo() throws {
        let url = try Self.copyOfInventory()
        _ = try TestSupport.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [url.path, "UPDATE Z_METADATA SET Z_PLIST = NULL"])
        let before = try TestSupport.snapshot(of: url.deletingLastPathComponent())
        let result = try TestSupport.faultline(
            [url.path, "--model", Self.inventoryModel.path, "--write", "--sql-debug", "0", "-c", #"insert Location label = "x""#, "-c", "save"])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("faultline: warning: \(url.path): the store's metadata (Z_METADATA.Z_PLIST) has no readable NSStoreModelVersionHashes, so the model could not be checked against the store; it was opened read-only: saving is refused\n"))
        #expect(result.stderr.contains("save refused, nothing was written"))
        #expect(try TestSupport.snapshot(of: url.deletingLastPathComponent()) == before)
    }

    @Test func deeplyNestedPredicatesAreAnErrorInEveryCommand() throws {
        let chain = Array(repeating: "1", count: 1_450).joined(separator: "+")
        let index = "count" + String(repeating: "[0]", count: 2_519)
        for command in ["count Location where count > \(chain)", "explain fetch Inventory where count > \(chain)", "fetch Inventory where \(index) == 1"] {
            let result = try TestSupport.faultline([Self.inventory.path, "--sql-debug", "0", "-c", command])
            #expect(result.status == 1, "\(command.prefix(30))")
            #expect(result.stderr.contains("nested too deeply"), "\(command.prefix(30))")
        }
        let filter = try TestSupport.faultline([Self.inventory.path, "--sql-debug", "0", "-c", "fetch Asset limit 1", "-c", "show $1.inventories where count > \(chain)"])
        #expect(filter.status == 1)
        #expect(filter.stderr.contains("nested too deeply"))
    }
}
