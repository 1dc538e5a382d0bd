import Foundation

extension ManagedObjectContext {
    /// Runs `body` inside one read transaction on the store: every fetch and fault it causes
    /// reads the same snapshot, and SQLite does not take and release its shared lock for each
    /// statement (a fault inside a transaction costs a fraction of one outside it). The
    /// transaction is not part of the SQL log, as Core Data's are not.
    ///
    /// Saving inside `body` is not possible (a save needs its own exclusive transaction); a
    /// context whose store is already in a transaction just runs `body`.
    ///
    /// ```swift
    /// try context.withReadTransaction {
    ///     for recipe in recipes { print(recipe.value(forKeyPath: "type.name") ?? "-") }
    /// }
    /// ```
    public func withReadTransaction<T>(_ body: () throws -> T) throws -> T {
        if parent != nil { return try body() }
        return try coordinator.performAndWait { try store.withReadTransaction(body) }
    }
}
