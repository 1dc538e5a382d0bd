// `import Faultline` brings the model and predicate types too, as `import CoreData` brings
// NSManagedObjectModel and NSPredicate.
@_exported import FaultlineModel
@_exported import FaultlinePredicate
