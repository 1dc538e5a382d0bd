import FaultlineModel
import FaultlineTestSupport
import Foundation
import Testing

/// The keyed archive ``ModelArchiver`` writes (the store's `Z_MODELCACHE`): it reads back
/// to the model it was written from, field by field, for every sample and corpus model; it
/// is a binary plist Foundation's own parser reads the same way; and a model far larger
/// than any real one (a 20,000-entity relationship chain, which overflowed the stack when
/// Foundation's `NSKeyedArchiver` wrote it) is written and read back.
@Suite struct ModelArchiveWriterTests {
    /// What the archive keeps of a model, as text lines, for comparing two models.
    static func archivedFields(_ model: ManagedObjectModel) -> [String] {
        var lines = ["versions \(model.versionIdentifiers.sorted())"]
        for e in model.entities {
            lines.append(
                "entity \(e.name) class=\(e.managedObjectClassName ?? "-") abstract=\(e.isAbstract) parent=\(e.superentityName ?? "-")"
                    + " subs=\(e.subentityNames.sorted()) renaming=\(e.renamingIdentifier ?? "-") modifier=\(e.versionHashModifier ?? "-")"
                    + " info=\(e.userInfo.sorted { $0.key < $1.key }) unique=\(e.uniquenessConstraints) compound=\(e.compoundIndexes)"
                    + " hash=\(e.versionHash.base64EncodedString())")
            for a in e.declaredAttributes.sorted(by: { $0.name < $1.name }) {
                lines.append(
                    "  attribute \(e.name).\(a.name) type=\(a.attributeType.rawValue) optional=\(a.isOptional) transient=\(a.isTransient)"
                        + " readOnly=\(a.isReadOnly) indexed=\(a.isIndexed) external=\(a.allowsExternalBinaryDataStorage)"
                        + " preserved=\(a.preservesValueInHistoryOnDeletion) transformer=\(a.valueTransformerName ?? "-")"
                        + " valueClass=\(a.valueClassName ?? "-") renaming=\(a.renamingIdentifier ?? "-") modifier=\(a.versionHashModifier ?? "-")"
                        + " info=\(a.userInfo.sorted { $0.key < $1.key }) default=\(typedDefault(a)) hash=\(a.versionHash.base64EncodedString())")
            }
            for r in e.declaredRelationships.sorted(by: { $0.name < $1.name }) {
                lines.append(
                    "  relationship \(e.name).\(r.name) → \(r.destinationEntityName) inverse=\(r.inverseName ?? "-") toMany=\(r.isToMany)"
                        + " ordered=\(r.isOrdered) rule=\(r.deleteRule.rawValue) optional=\(r.isOptional) transient=\(r.isTransient)"
                        + " readOnly=\(r.isReadOnly) count=\(r.minCount)...\(r.maxCount) renaming=\(r.renamingIdentifier ?? "-")"
                        + " modifier=\(r.versionHashModifier ?? "-") info=\(r.userInfo.sorted { $0.key < $1.key })"
                        + " hash=\(r.versionHash.base64EncodedString())")
            }
        }
        return lines
    }

    /// A default value as the value it stands for (`"0.0"` and `"0"` are one Double).
    static func typedDefault(_ a: AttributeDescription) -> String {
        guard let text = a.defaultValueString else { return a.defaultDateTimeInterval.map { "date \($0)" } ?? "-" }
        switch a.attributeType {
        case .integer16, .integer32, .integer64: return Int64(text).map { "int \($0)" } ?? "-"
        case .double, .float: return Double(text).map { "real \($0 == 0 ? 0 : $0)" } ?? "-"
        case .boolean: return "bool \(text == "YES" || text == "1" || text.lowercased() == "true")"
        case .date: return a.defaultDateTimeInterval.map { "date \($0)" } ?? Double(text).map { "date \($0)" } ?? "-"
        case .string, .uri, .decimal, .uuid: return "text \(text)"
        default: return "-"
        }
    }

    /// Archives a model and reads it back; expects every archived field to be equal.
    static func expectRoundTrip(_ model: ManagedObjectModel, _ label: String) throws {
        let back = try ManagedObjectModel(storeModelCacheBlob: try ModelArchiver.modelCacheBlob(for: model))
        let want = archivedFields(model), got = archivedFields(back)
        #expect(got.count == want.count, "\(label)")
        for (w, g) in zip(want, got) where w != g {
            Issue.record("\(label): \(w)\n  read back as\n\(g)")
            break
        }
        #expect(back.entityVersionHashesByName == model.entityVersionHashesByName, "\(label)")
    }

    /// A model that uses every field the archive keeps, and every default type.
    static let everyFieldModel = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" userDefinedModelVersionIdentifier="v2.1">
            <entity name="Base" representedClassName="BaseMO" isAbstract="YES" versionHashModifier="bm1" elementID="baseRenamed">
                <attribute name="created" optional="YES" attributeType="Date" defaultDateTimeInterval="12345.5"/>
                <attribute name="flag" optional="YES" attributeType="Boolean" defaultValueString="YES" usesScalarValueType="YES"/>
                <attribute name="flagOff" attributeType="Boolean" defaultValueString="NO" usesScalarValueType="YES"/>
                <attribute name="count" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="i16" attributeType="Integer 16" defaultValueString="-7" usesScalarValueType="YES" indexed="YES"/>
                <attribute name="i64" attributeType="Integer 64" defaultValueString="9000000000" usesScalarValueType="YES"/>
                <attribute name="dbl" attributeType="Double" defaultValueString="2.5" usesScalarValueType="YES"/>
                <attribute name="zero" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
                <attribute name="flt" attributeType="Float" defaultValueString="-0.0" usesScalarValueType="YES"/>
                <attribute name="dec" optional="YES" attributeType="Decimal" defaultValueString="1.25"/>
                <attribute name="blob" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                <attribute name="xf" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData" customClassName="NSArray"/>
                <attribute name="uid" optional="YES" attributeType="UUID" preserveAfterDeletion="YES"/>
                <attribute name="url" optional="YES" attributeType="URI"/>
                <attribute name="tr" optional="YES" transient="YES" attributeType="String" defaultValueString="ünï©ødé ✓"/>
                <attribute name="name" attributeType="String" defaultValueString="" versionHashModifier="m2" elementID="oldName">
                    <userInfo>
                        <entry key="k1" value="v1"/>
                        <entry key="ключ" value="значение"/>
                    </userInfo>
                </attribute>
                <relationship name="children" optional="YES" toMany="YES" deletionRule="Cascade" ordered="YES" destinationEntity="Base" inverseName="parent" inverseEntity="Base"/>
                <relationship name="parent" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Base" inverseName="children" inverseEntity="Base"/>
                <relationship name="peers" optional="YES" toMany="YES" minCount="1" maxCount="5" deletionRule="Deny" destinationEntity="Base" inverseName="peers" inverseEntity="Base"/>
                <relationship name="tagged" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="base" inverseEntity="Tag"/>
                <userInfo>
                    <entry key="entityKey" value="entityValue"/>
                </userInfo>
                <uniquenessConstraints>
                    <uniquenessConstraint><constraint value="name"/><constraint value="i16"/></uniquenessConstraint>
                    <uniquenessConstraint><constraint value="uid"/></uniquenessConstraint>
                </uniquenessConstraints>
                <compoundIndexes>
                    <compoundIndex><index value="name"/><index value="dbl"/></compoundIndex>
                </compoundIndexes>
            </entity>
            <entity name="Leaf" parentEntity="Base">
                <attribute name="extra" optional="YES" attributeType="Integer 32" defaultValueString="3" usesScalarValueType="YES"/>
                <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="leaves" inverseEntity="Tag"/>
                <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Other"/>
            </entity>
            <entity name="Mid" parentEntity="Base"/>
            <entity name="Tag" representedClassName="Tag">
                <attribute name="label" attributeType="String"/>
                <relationship name="leaves" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Leaf" inverseName="tags" inverseEntity="Leaf"/>
                <relationship name="base" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Mid" inverseName="tagged" inverseEntity="Base"/>
            </entity>
            <entity name="Other" representedClassName="Other">
                <attribute name="when" optional="YES" attributeType="Date" defaultValueString="0"/>
            </entity>
        </model>
        """

    @Test func aModelWithEveryArchivedFieldRoundTrips() throws {
        let folder = try TestSupport.temporaryDirectory().appendingPathComponent("EveryField.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Self.everyFieldModel.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        let model = try ManagedObjectModel(contentsOf: folder)
        try Self.expectRoundTrip(model, "EveryField")
        // Numbers keep their type: Foundation's archiver shared equal NSNumbers, so a zero
        // Integer 64 default could come back as Boolean NO, and NO as the integer 0.
        let back = try ManagedObjectModel(storeModelCacheBlob: try ModelArchiver.modelCacheBlob(for: model))
        let base = try #require(back.entity(named: "Base"))
        #expect(base.attribute(named: "count")?.defaultValueString == "0")
        #expect(base.attribute(named: "flagOff")?.defaultValueString == "NO")
        #expect(base.attribute(named: "zero")?.defaultValueString == "0")
        #expect(base.attribute(named: "created")?.defaultDateTimeInterval == 12345.5)
        #expect(back.entity(named: "Tag")?.relationship(named: "base")?.inverseName == "tagged")
    }

    @Test func everySampleModelRoundTrips() throws {
        for name in ["Books", "Inventory", "Recipes", "Triage"] {
            let url = TestSupport.packageRoot.appendingPathComponent("Samples/\(name)/\(name).xcdatamodeld")
            try Self.expectRoundTrip(try ManagedObjectModel(contentsOf: url), name)
        }
    }

    @Test(.enabled(if: Corpus.shouldRun, Corpus.skipMessage))
    func everyCorpusModelRoundTripsFieldByField() throws {
        let corpus = try Corpus.required()
        var checked = 0
        for folder in ["models", "compiled"] {
            let base = corpus.appendingPathComponent(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: base.path).sorted() where name != "xcode3-format" {
                try Self.expectRoundTrip(try ManagedObjectModel(contentsOf: base.appendingPathComponent(name)), "\(folder)/\(name)")
                checked += 1
            }
        }
        #expect(checked >= 8)
    }

    /// The archive is a well-formed binary plist: Foundation's parser reads it and finds the
    /// same `$objects` as ours.
    @Test func foundationReadsTheArchive() throws {
        let model = try ManagedObjectModel(contentsOf: TestSupport.inventoryFolder.appendingPathComponent("Inventory.xcdatamodeld"))
        let data = try ModelArchiver.archive(model)
        let theirs = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        #expect(theirs["$archiver"] as? String == "NSKeyedArchiver")
        #expect((theirs["$version"] as? NSNumber)?.intValue == 100_000)
        let ours = try #require(BinaryPropertyList.parse(data).dictionaryValue)
        let objects = try #require(theirs["$objects"] as? [Any])
        #expect(objects.count == ours["$objects"]?.arrayValue?.count)
        #expect(objects.first as? String == "$null")
        let classNames = Set(objects.compactMap { ($0 as? [String: Any])?["$classname"] as? String })
        #expect(
            classNames == ["NSManagedObjectModel", "NSEntityDescription", "NSAttributeDescription", "NSRelationshipDescription", "NSDictionary", "NSArray"])
    }

    /// Entity Ei has a String attribute and a to-one `r` to E(i+1), the last to E0: a
    /// relationship path through every entity. Foundation's archiver recursed along it and
    /// overflowed the stack (and took minutes); this must take seconds.
    @Test func aTwentyThousandEntityChainRoundTrips() throws {
        let n = 20_000
        let entities = (0..<n).map { i in
            EntityDescription(
                name: "E\(i)", managedObjectClassName: "E\(i)",
                attributes: [AttributeDescription(name: "a", type: .string)],
                relationships: [RelationshipDescription(name: "r", destination: "E\((i + 1) % n)", maxCount: 1)])
        }
        let model = try ManagedObjectModel(entities: entities)
        let archive = try ModelArchiver.archive(model)
        let back = try ManagedObjectModel(compiledModelData: archive)
        #expect(back.entities.count == n)
        #expect(back.entityVersionHashesByName == model.entityVersionHashesByName)
        #expect(back.entity(named: "E\(n - 1)")?.relationship(named: "r")?.destinationEntityName == "E0")
        #expect(back.entity(named: "E7")?.attribute(named: "a")?.attributeType == .string)
    }
}

/// The binary property list writer against the reader and against Foundation's parser.
@Suite struct BinaryPropertyListWriterTests {
    static let sample: PropertyListValue = .dictionary([
        "ascii": .string("hello"),
        "unicode": .string("ünï©ødé ✓ 🚀"),
        "empty": .string(""),
        "small": .integer(7),
        "byte": .integer(255),
        "short": .integer(65_535),
        "int": .integer(4_294_967_295),
        "long": .integer(Int64.max),
        "negative": .integer(-1),
        "min": .integer(Int64.min),
        "real": .real(2.5),
        "negativeZero": .real(-0.0),
        "zero": .real(0),
        "true": .bool(true),
        "false": .bool(false),
        "date": .date(1000.25),
        "data": .data(Data([0, 1, 2, 255])),
        "uid": .uid(300),
        "long string": .string(String(repeating: "x", count: 1000)),
        "array": .array((0..<40).map { .integer(Int64($0)) }),
        "nested": .dictionary(["inner": .array([.string("a"), .array([.bool(true)]), .dictionary([:])])]),
    ])

    @Test func whatIsWrittenReadsBackEqual() throws {
        let data = BinaryPropertyList.data(Self.sample)
        #expect(BinaryPropertyList.isBinary(data))
        let back = try BinaryPropertyList.parse(data)
        #expect(back == Self.sample)
        // -0.0 == 0.0, so check the sign survived separately.
        #expect(back.dictionaryValue?["negativeZero"].map { if case .real(let d) = $0 { d.sign == .minus } else { false } } == true)
    }

    @Test func foundationReadsWhatIsWritten() throws {
        var sample = Self.sample.dictionaryValue ?? [:]
        sample["uid"] = nil  // Foundation has no public type for CF$UID
        let data = BinaryPropertyList.data(.dictionary(sample))
        let theirs = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        #expect(theirs["unicode"] as? String == "ünï©ødé ✓ 🚀")
        #expect((theirs["min"] as? NSNumber)?.int64Value == Int64.min)
        #expect((theirs["long"] as? NSNumber)?.int64Value == Int64.max)
        #expect((theirs["int"] as? NSNumber)?.int64Value == 4_294_967_295)
        #expect(theirs["data"] as? Data == Data([0, 1, 2, 255]))
        #expect((theirs["date"] as? Date)?.timeIntervalSinceReferenceDate == 1000.25)
        #expect((theirs["array"] as? [Any])?.count == 40)
        #expect((theirs["long string"] as? String)?.count == 1000)
    }

    /// Wide containers (more than 255 and 65,535 objects: wider references and offsets).
    @Test func largeTablesUseWiderReferences() throws {
        let value = PropertyListValue.array((0..<70_000).map { .string("s\($0)") })
        let back = try BinaryPropertyList.parse(BinaryPropertyList.data(value))
        #expect(back.arrayValue?.count == 70_000)
        #expect(back.arrayValue?.last == .string("s69999"))
    }

    /// Equal values give equal bytes (dictionary keys are written sorted).
    @Test func outputIsDeterministic() {
        #expect(BinaryPropertyList.data(Self.sample) == BinaryPropertyList.data(Self.sample))
    }
}
