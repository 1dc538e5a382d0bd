import Faultline
import FaultlineModel
import FaultlinePredicate
import FaultlineSQL
import FaultlineTestSupport
import Foundation
import Testing

/// Fetch request templates and fetched properties, read from an `.xcdatamodel` written as
/// Xcode writes them, run against a new store.
@Suite struct FetchTemplateTests {
    static let contents = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23F79" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Kind" representedClassName="Kind" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <relationship name="recipes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Recipe" inverseName="kind" inverseEntity="Recipe"/>
            </entity>
            <entity name="Recipe" representedClassName="Recipe" syncable="YES">
                <attribute name="minutes" optional="YES" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="name" attributeType="String"/>
                <relationship name="kind" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Kind" inverseName="recipes" inverseEntity="Kind"/>
                <fetchedProperty name="sameKind" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Recipe" predicateString="kind == $FETCH_SOURCE.kind AND SELF != $FETCH_SOURCE" includeSubentities="YES"/>
                </fetchedProperty>
                <fetchedProperty name="quicker" optional="YES">
                    <userInfo>
                        <entry key="limit" value="30"/>
                    </userInfo>
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Recipe" predicateString="minutes &lt; $FETCH_SOURCE.minutes AND minutes &lt; $FETCHED_PROPERTY.userInfo.limit" includeSubentities="YES"/>
                </fetchedProperty>
            </entity>
            <fetchRequest name="recipesOfKind" entity="Recipe" predicateString="kind.name == $KIND AND minutes &lt;= $MINUTES" includeSubentities="YES" includePropertyValues="YES" includesPendingChanges="YES" returnObjectsAsFaults="YES"/>
            <fetchRequest name="quickOnes" entity="Recipe" predicateString="minutes &lt; 20" fetchLimit="2" resultType="1" includeSubentities="YES"/>
        </model>
        """

    /// A new store with two kinds and four recipes; the statements it runs from then on.
    func makeStore() throws -> (ManagedObjectModel, ManagedObjectContext, SQLStatements) {
        let folder = try TestSupport.temporaryDirectory("faultline-templates")
        let modelFolder = folder.appendingPathComponent("Kitchen.xcdatamodel")
        try FileManager.default.createDirectory(at: modelFolder, withIntermediateDirectories: true)
        try Data(Self.contents.utf8).write(to: modelFolder.appendingPathComponent("contents"))
        let model = try ManagedObjectModel(contentsOf: modelFolder)
        let coordinator = try PersistentStoreCoordinator(model: model, storeURL: folder.appendingPathComponent("Kitchen.sqlite"), options: .init(readOnly: false, createIfMissing: true))
        let context = ManagedObjectContext(coordinator: coordinator)
        let dessert = try context.insertObject(entityName: "Kind")
        try dessert.setValue("Dessert", forKey: "name")
        let soup = try context.insertObject(entityName: "Kind")
        try soup.setValue("Soup", forKey: "name")
        for (name, minutes, kind) in [("Tart", Int32(60), dessert), ("Mousse", 25, dessert), ("Sorbet", 10, dessert), ("Broth", 15, soup)] {
            let recipe = try context.insertObject(entityName: "Recipe")
            try recipe.setValue(name, forKey: "name")
            try recipe.setValue(minutes, forKey: "minutes")
            try recipe.setValue(kind, forKey: "kind")
        }
        try context.save()
        let fresh = ManagedObjectContext(coordinator: coordinator)
        let statements = SQLStatements()
        coordinator.store.connection.addTraceObserver { event in
            if case .statement(let sql, let arguments) = event { statements.append(sql, arguments) }
        }
        return (model, fresh, statements)
    }

    @Test func theLoaderReadsTemplatesAndFetchedProperties() throws {
        let (model, _, _) = try makeStore()
        #expect(model.fetchRequestTemplates.keys.sorted() == ["quickOnes", "recipesOfKind"])
        #expect(model.entity(named: "Recipe")?.fetchedProperties.map(\.name) == ["quicker", "sameKind"])
    }

    @Test func aTemplateRunsWithItsVariablesSubstituted() throws {
        let (model, context, statements) = try makeStore()
        let request = try model.fetchRequest(fromTemplate: "recipesOfKind", substitutionVariables: ["KIND": "Dessert", "MINUTES": 30])
        #expect(request.predicate?.predicateFormat == #"kind.name == "Dessert" AND minutes <= 30"#)
        let recipes = try context.fetch(request)
        #expect(statements.sql == ["SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZMINUTES, t0.ZNAME, t0.ZKIND FROM ZRECIPE t0 JOIN ZKIND t1 ON t0.ZKIND = t1.Z_PK WHERE ( t1.ZNAME = ? AND  t0.ZMINUTES <= ?)"])
        #expect(Set(recipes.compactMap { $0.value(forKey: "name") as? String }) == ["Mousse", "Sorbet"])
    }

    @Test func aTemplateKeepsItsResultTypeAndLimit() throws {
        let (model, context, statements) = try makeStore()
        let request = try model.fetchRequest(fromTemplate: "quickOnes")
        #expect(request.resultType == .managedObjectID)
        guard case .objectIDs(let ids) = try context.execute(request) else { Issue.record("not IDs"); return }
        #expect(ids.count == 2)
        // No includePropertyValues in the XML means NO (Xcode's checkboxes; model-file-formats
        // §2.6): only the keys are read.
        #expect(statements.sql == ["SELECT 0, t0.Z_PK FROM ZRECIPE t0 WHERE  t0.ZMINUTES < ?  LIMIT 2"])
    }

    @Test func missingTemplatesAndVariablesAreNamed() throws {
        let (model, _, _) = try makeStore()
        let unknown = #expect(throws: FetchRequestError.self) { try model.fetchRequest(fromTemplate: "nope") }
        #expect(unknown?.message == "the model has no fetch request template named nope; templates: quickOnes, recipesOfKind")
        let missing = #expect(throws: FetchRequestError.self) { try model.fetchRequest(fromTemplate: "recipesOfKind", substitutionVariables: ["KIND": "Soup"]) }
        #expect(missing?.message.hasPrefix("Can't get value for 'MINUTES' in bindings of template recipesOfKind") == true)
    }

    @Test func fetchedPropertiesEvaluateWhenReadAndAreKept() throws {
        let (_, context, statements) = try makeStore()
        var request = FetchRequest(entityName: "Recipe")
        request.predicate = try FLPredicate(format: "name == 'Mousse'")
        guard let mousse = try context.fetch(request).first else { Issue.record("no Mousse"); return }
        let before = statements.sql.count
        let same = mousse.value(forKey: "sameKind") as? [ManagedObject] ?? []
        // $FETCH_SOURCE.kind became the kind's key, $FETCH_SOURCE the object's; the model's
        // request has no includePropertyValues, so only the keys are read.
        #expect(statements.sql[before] == "SELECT 0, t0.Z_PK FROM ZRECIPE t0 WHERE ( t0.ZKIND = ? AND  t0.Z_PK <> ?)")
        #expect(statements.arguments[before] == [.integer(1), .integer(mousse.objectID.primaryKey)])
        #expect(Set(same.compactMap { $0.value(forKey: "name") as? String }) == ["Tart", "Sorbet"])
        let count = statements.sql.count
        _ = mousse.value(forKey: "sameKind")
        #expect(statements.sql.count == count)  // kept until the object is turned into a fault
        let quicker = try context.fetchedProperty("quicker", of: mousse)
        #expect(statements.arguments.last == [.integer(25), .text("30")])  // user info values are strings
        #expect(Set(quicker.compactMap { $0.value(forKey: "name") as? String }) == ["Sorbet", "Broth"])
        context.refresh(mousse, mergeChanges: false)
        _ = mousse.value(forKey: "sameKind")
        #expect(statements.sql.count > count + 1)
    }
}
