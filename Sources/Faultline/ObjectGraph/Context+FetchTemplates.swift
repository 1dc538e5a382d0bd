import FaultlineModel
import FaultlinePredicate
import Foundation

extension ManagedObjectModel {
    /// The fetch request of a template stored in the model, with its `$VARIABLE`s replaced
    /// (`NSManagedObjectModel.fetchRequestFromTemplate(withName:substitutionVariables:)`).
    ///
    /// ```swift
    /// let request = try model.fetchRequest(fromTemplate: "recipesNamed", substitutionVariables: ["NAME": "Cake"])
    /// let recipes = try context.fetch(request)
    /// ```
    ///
    /// - Throws: ``FetchRequestError`` when the model has no such template, its predicate does not
    ///   parse, or a variable it names has no value (Core Data: "Can't get value for 'NAME'
    ///   in bindings").
    public func fetchRequest(fromTemplate name: String, substitutionVariables: [String: Any?] = [:]) throws -> FetchRequest {
        guard let template = fetchRequestTemplates[name] else {
            let names = fetchRequestTemplates.keys.sorted()
            throw FetchRequestError("the model has no fetch request template named \(name)" + (names.isEmpty ? " (it has none)" : "; templates: \(names.joined(separator: ", "))"))
        }
        return try FetchRequest(template: template, substitutionVariables: substitutionVariables, context: "template \(name)")
    }
}

extension FetchRequest {
    /// A request from a template stored in the model, variables substituted.
    init(template: FetchRequestTemplate, substitutionVariables: [String: Any?], context: String) throws {
        self.init(entityName: template.entityName)
        if let format = template.predicateFormat, !format.isEmpty {
            var predicate: FLPredicate
            do {
                predicate = try FLPredicate(format: format)
                predicate = try predicate.substituting(substitutionVariables)
            } catch {
                throw FetchRequestError("the predicate of \(context) (\(format)) cannot be used: \(error)")
            }
            let missing = SQLiteStore.variables(in: predicate).sorted()
            if let first = missing.first {
                throw FetchRequestError("Can't get value for '\(first)' in bindings of \(context) (\(format)); pass it in substitutionVariables")
            }
            self.predicate = predicate
        }
        fetchLimit = template.fetchLimit
        fetchOffset = template.fetchOffset
        fetchBatchSize = template.fetchBatchSize
        resultType = FetchResultType(rawValue: template.resultType) ?? .managedObject
        includesSubentities = template.includesSubentities
        includesPropertyValues = template.includesPropertyValues
        includesPendingChanges = template.includesPendingChanges
        returnsObjectsAsFaults = template.returnsObjectsAsFaults
        returnsDistinctResults = template.returnsDistinctResults
        sortDescriptors = template.sortDescriptors.map { FLSortDescriptor(key: $0.keyPath, ascending: $0.ascending) }
    }
}

extension ManagedObjectContext {
    /// The value of a fetched property of an object (`NSFetchedPropertyDescription`): its
    /// fetch request run with `$FETCH_SOURCE` bound to the object and `$FETCHED_PROPERTY` to
    /// the property (`$FETCHED_PROPERTY.userInfo.key` reads its user info), as an array in
    /// the request's order. The result is kept until the object is turned into a fault
    /// (``refresh(_:mergeChanges:)``), as Core Data keeps it; `value(forKey:)` calls this.
    ///
    /// ```swift
    /// // Recipe.sameType: Recipe where type == $FETCH_SOURCE.type AND SELF != $FETCH_SOURCE
    /// let similar = try context.fetchedProperty("sameType", of: recipe)
    /// // SELECT 0, t0.Z_PK, t0.Z_OPT, … FROM ZRECIPE t0 WHERE ( t0.ZTYPE = ? AND  t0.Z_PK <> ?)
    /// ```
    ///
    /// - Throws: ``FetchRequestError`` when the entity has no such fetched property or its request
    ///   cannot run.
    public func fetchedProperty(_ name: String, of object: ManagedObject) throws -> [ManagedObject] {
        guard let property = object.entity.fetchedProperties.first(where: { $0.name == name }) else {
            throw FetchRequestError("entity \(object.entity.name) has no fetched property \(name)")
        }
        return try fetchedPropertyValue(property, of: object)
    }

    func fetchedPropertyValue(_ property: FetchedPropertyDescription, of object: ManagedObject) throws -> [ManagedObject] {
        checkAccess()
        if let ids = object.fetchedPropertyValues[property.name] { return ids.map { self.object(with: $0) } }
        let context = "fetched property \(object.entity.name).\(property.name)"
        var request = try FetchRequest(template: FetchRequestTemplate(
            name: property.name, entityName: property.fetchRequest.entityName, fetchLimit: property.fetchRequest.fetchLimit,
            fetchBatchSize: 0, resultType: 0, includesSubentities: property.fetchRequest.includesSubentities,
            includesPropertyValues: property.fetchRequest.includesPropertyValues, includesPendingChanges: property.fetchRequest.includesPendingChanges,
            returnsObjectsAsFaults: property.fetchRequest.returnsObjectsAsFaults, returnsDistinctResults: false), substitutionVariables: [:], context: context)
        request.sortDescriptors = property.fetchRequest.sortDescriptors.map { FLSortDescriptor(key: $0.keyPath, ascending: $0.ascending) }
        if let format = property.fetchRequest.predicateFormat, !format.isEmpty {
            let parsed: FLPredicate
            do {
                parsed = try FLPredicate(format: format)
                try FLNestingDepth.check(parsed)
            } catch {
                throw FetchRequestError("the predicate of \(context) (\(format)) cannot be used: \(error)")
            }
            let bound = try FetchVariables(source: object, property: property).predicate(parsed)
            let missing = SQLiteStore.variables(in: bound).sorted()
            if let first = missing.first {
                throw FetchRequestError("Can't get value for '\(first)' in bindings of \(context) (\(format)); only $FETCH_SOURCE and $FETCHED_PROPERTY are bound")
            }
            request.predicate = bound
        }
        let objects = try fetchObjects(request)
        object.fetchedPropertyValues[property.name] = objects.map(\.objectID)
        return objects
    }
}

/// Replaces `$FETCH_SOURCE` and `$FETCHED_PROPERTY` (and key paths from them) in a fetched
/// property's predicate with constants. The caller checks the nesting depth first.
private struct FetchVariables {
    let source: ManagedObject
    let property: FetchedPropertyDescription

    func predicate(_ p: FLPredicate) throws -> FLPredicate {
        switch p.node {
        case .constant: return p
        case .comparison(var c):
            c.left = try expression(c.left)
            c.right = try expression(c.right)
            return FLPredicate(.comparison(c))
        case .and(let items): return FLPredicate(.and(try items.map(predicate)))
        case .or(let items): return FLPredicate(.or(try items.map(predicate)))
        case .not(let inner): return FLPredicate(.not(try predicate(inner)))
        }
    }

    func expression(_ e: FLExpression) throws -> FLExpression {
        switch e.node {
        case .variable(let name) where name == "FETCH_SOURCE":
            return .constant(.object(FLObjectReference(source.objectID)))
        case .variable(let name) where name == "FETCHED_PROPERTY":
            return .constant(.string(property.name))
        case .member(let base, let keyPath):
            if case .variable(let name) = base.node, name == "FETCH_SOURCE" {
                return try constant(source.value(forKeyPath: keyPath, visiting: 10_000), "$FETCH_SOURCE.\(keyPath)")
            }
            if case .variable(let name) = base.node, name == "FETCHED_PROPERTY" {
                let parts = keyPath.split(separator: ".", maxSplits: 1).map(String.init)
                switch parts.first {
                case "name": return .constant(.string(property.name))
                case "userInfo" where parts.count == 2: return try constant(property.userInfo[parts[1]], "$FETCHED_PROPERTY.\(keyPath)")
                default: throw FetchRequestError("$FETCHED_PROPERTY.\(keyPath) is not known (name, userInfo.KEY)")
                }
            }
            return FLExpression(.member(try expression(base), keyPath: keyPath))
        case .function(let name, let args): return .function(name, try args.map(expression))
        case .aggregate(let items): return FLExpression(.aggregate(try items.map(expression)))
        default: return e
        }
    }

    private func constant(_ value: Any?, _ what: String) throws -> FLExpression {
        if let object = value as? ManagedObject { return .constant(.object(FLObjectReference(object.objectID))) }
        if let objects = value as? [ManagedObject] { return .constant(.array(objects.map { .object(FLObjectReference($0.objectID)) })) }
        guard let converted = FLValue(converting: value) else { throw FetchRequestError("the value of \(what) cannot appear in a predicate") }
        return .constant(converted)
    }
}
