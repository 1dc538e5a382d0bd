import FaultlineTestSupport
import Foundation
import Testing

/// Dates typed as the shell prints them (issue: `date > "2026-11-05T00:00:00Z"` counted 0).
@Suite struct TypedLiteralShellTests {
    static let store = TestSupport.inventoryFolder.appendingPathComponent("Inventory.sqlite").path

    @Test func datesTypedAsTheShellPrintsThemCompareAsDates() async throws {
        let result = try await TestSupport.faultline([Self.store, "--sql-debug", "0"], stdin: """
            count Inventory where date > "2026-11-05T00:00:00Z"
            count Inventory where date BETWEEN {"2026-11-01", "2026-11-10"}
            count Location where ANY inventories.date > "2026-11-10"
            count Inventory where date > CAST("2026-11-05T00:00:00Z", "NSDate")
            fetch Asset where label == "Laptop"
            show $1.inventories where date > "2026-11-15" 
            """)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(Array(lines.prefix(4)) == ["5", "4", "2", "5"])
        #expect(lines.last == "1 row")
    }

    @Test func aStringThatIsNotADateIsAnErrorNamingTheKeyPath() async throws {
        let result = try await TestSupport.faultline([Self.store, "--sql-debug", "0", "-c", #"count Inventory where date > "last week""#])
        #expect(result.status == 1)
        #expect(result.stderr == "Error: date is a Date: \"last week\" is not an ISO 8601 date or date-time such as 2026-11-05, 2026-11-05T14:00:00Z or 2026-11-05T14:00:00+01:00\n")
    }
}
