// `import Faultline` brings the model and predicate types too, as `import CoreData` brings
// NSManagedObjectModel and NSPredicate.
@_exported import FaultlineModel
@_exported import FaultlinePredicate
// A bound value as SQLite holds it: part of the API where statements are shown with their
// values (`SQLiteStore.sqlForFetch(_:)`, `LightweightMigration.Statement`). The rest of
// FaultlineSQL (connections, statements) is the store's own business.
@_exported import enum FaultlineSQL.SQLValue
