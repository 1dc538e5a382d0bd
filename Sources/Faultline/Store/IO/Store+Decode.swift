import FaultlineModel
import FaultlineSQL
import Foundation

// Decoding rows: a plan per entity and column list (which slot each column fills, how its
// value is decoded), cached, and the decoder that runs it over a statement's rows.

extension SQLiteStore {
    /// The ``ObjectIDNames`` number of an entity of this store, for making its IDs.
    func idNames(entityName: String) -> UInt32 {
        if let number = idNamesByEntityName[entityName] { return number }
        let number = ObjectIDNames.number(entityName: entityName, storeIdentifier: identifier)
        idNamesByEntityName[entityName] = number
        return number
    }

    /// The ``ObjectIDNames`` number of the entity with a `Z_ENT` number; nil when the
    /// mapping has no such entity.
    func idNames(entityNumber: Int) -> UInt32? {
        if let number = idNamesByEntityNumber[entityNumber] { return number }
        guard let name = mapping.entityNames[entityNumber] else { return nil }
        let number = idNames(entityName: name)
        idNamesByEntityNumber[entityNumber] = number
        return number
    }

    /// A permanent ID of an entity of this store.
    func objectID(entityName: String, primaryKey: Int64) -> ManagedObjectID {
        ManagedObjectID(names: idNames(entityName: entityName), primaryKey: primaryKey)
    }

    /// A decoder for the rows of a SELECT of an entity's `columns` (after `Z_ENT` or 0, `Z_PK`,
    /// `Z_OPT`); make one per statement run.
    /// `variant` names a column list other than the entity's own (a partial fetch), so its
    /// plans are cached apart.
    func rowDecoder(for entity: EntityDescription, columns: [SelectedColumn], variant: String = "") -> RowDecoder {
        RowDecoder(entity: entity, columns: columns, plan: decodePlan(for: entity, rowEntity: entity, columns: columns, variant: variant), variant: variant)
    }

    /// Decodes the statement's current row into the slots of the row's entity, by a plan
    /// worked out once per entity: no key is hashed and no column value is boxed twice.
    /// Binary data kept in an external file is not read here: the slot holds an
    /// ``ExternalBinaryDataReference`` until the value is asked for.
    func decodeRow(_ statement: Statement, with decoder: RowDecoder) -> StoreRow {
        let columns = statement.currentColumns()
        let plan = rowPlan(columns, with: decoder)
        let count = plan.slotSteps.count
        // Reserved and appended: the specialized path (the unsafe-uninitialized initializer
        // reached the standard library's generic allocation, metadata lookup included).
        var slots = ContiguousArray<StoredValue>()
        slots.reserveCapacity(count)
        appendValues(columns, plan: plan, to: &slots)
        return StoreRow(
            entity: plan.rowEntity,
            objectID: ManagedObjectID(names: plan.rowNames, primaryKey: columns[1].int64),
            version: columns[2].int64, values: ObjectValues(layout: plan.layout, slots: slots))
    }

    /// Decodes every row of a statement into a ``DecodedPage``; returns the time spent in SQLite.
    /// Rows go into pages of about ``DecodedPage/slotsPerPage`` values: a big fetch fills
    /// pages of a fixed size (no buffer grows and moves), a small one a page grown to fit it.
    /// `expectedRows`, when known (a batch or a prefetch by key: at most a row a key), sizes
    /// the first page and the row list for that many rows of the fetched entity, so neither
    /// grows and moves while it is filled. `eachRow`, when given, runs after each row is
    /// decoded, with the statement on that row (a prefetch reads its owner column there).
    /// `reusingKeptRows` starts the row list from the one a fetch gave back (``ScratchArrays``),
    /// whatever its size: for a caller that gives it back in turn (``DecodedPage/recycle()``).
    func decodePage(
        _ statement: Statement, with decoder: RowDecoder, into page: inout DecodedPage, expectedRows: Int = 0, reusingKeptRows: Bool = false,
        eachRow: ((Statement) -> Void)? = nil
    ) throws -> Double {
        // The first page starts small and grows (a fetch of a few rows takes little room),
        // unless the number of rows is known; the next ones are made full size. Each plan's
        // rows (the fetched entity's, a sub-entity's) fill pages of their own: a page's rows
        // share its format.
        let mainPlan = Unmanaged.passUnretained(decoder.plan)
        let expectedUnits = expectedRows.multipliedReportingOverflow(by: decoder.plan.rowUnits)
        let fullUnits = RowPage.fullUnits(format: decoder.plan.compactFormat)
        let firstCapacity = expectedUnits.overflow ? fullUnits : min(max(expectedUnits.partialValue, 64), fullUnits)
        var pages: [RowPage] = [RowPage(format: decoder.plan.compactFormat, capacity: firstCapacity)]
        var rows = ScratchArrays.take(DecodedPage.Row.self, capacity: max(expectedRows, 0), growing: reusingKeptRows)
        var plans: [DecodePlan] = [decoder.plan]
        // The page each plan's rows go to, by plan (an index of `pages`).
        var pageOfPlan: [Int] = [0]
        // The row's plan and the page being filled are used unretained: the decoder (or its
        // cache of sub-entity plans), a parameter alive for the call, holds the plans, `pages`
        // the pages. Retained, each cost an atomic increment and decrement per row on one
        // shared line.
        var current = Unmanaged.passUnretained(pages[0])
        var currentIndex = 0
        let sqlSeconds = try statement.forEachRow {
            // The row's columns found once (see Statement.currentColumns()).
            let columns = statement.currentColumns()
            let planReference = decoder.hasSubentities ? Unmanaged.passUnretained(rowPlan(columns, with: decoder)) : mainPlan
            planReference._withUnsafeGuaranteedRef { plan in
                var planIndex = 0
                if planReference.toOpaque() != mainPlan.toOpaque() {
                    planIndex = plans.firstIndex { $0 === plan } ?? plans.count
                    if planIndex == plans.count {
                        plans.append(plan)
                        pages.append(RowPage(format: plan.compactFormat, capacity: min(64 * plan.rowUnits, RowPage.fullUnits(format: plan.compactFormat))))
                        pageOfPlan.append(pages.count - 1)
                    }
                }
                if pageOfPlan[planIndex] != currentIndex {
                    currentIndex = pageOfPlan[planIndex]
                    current = Unmanaged.passUnretained(pages[currentIndex])
                }
                let units = plan.rowUnits
                current._withUnsafeGuaranteedRef { page in
                    if page.count + units > page.fullUnits, page.count > 0 {
                        pages.append(RowPage(format: plan.compactFormat, capacity: page.fullUnits))
                        currentIndex = pages.count - 1
                        pageOfPlan[planIndex] = currentIndex
                        current = Unmanaged.passUnretained(pages[currentIndex])
                    }
                }
                current._withUnsafeGuaranteedRef { page in
                    let base = page.count
                    appendValues(columns, plan: plan, to: page)
                    rows.append(DecodedPage.Row(primaryKey: columns[1].int64, version: columns[2].int64, base: base, page: currentIndex, plan: planIndex))
                }
            }
            eachRow?(statement)
        }
        page = DecodedPage(pages: pages, plans: plans, rows: rows)
        return sqlSeconds
    }

    /// The plan for the statement's current row: the fetched entity's, or a sub-entity's.
    @inline(__always)
    private func rowPlan(_ columns: RowColumns, with decoder: RowDecoder) -> DecodePlan {
        let plan = decoder.plan
        if decoder.hasSubentities {
            let number = Int(columns[0].int64)
            if number != plan.entityNumber {
                if let cached = decoder.subentityPlans[number] { return cached }
                if let name = mapping.entityNames[number], let rowEntity = model.entity(named: name) {
                    let subplan = decodePlan(for: decoder.entity, rowEntity: rowEntity, columns: decoder.columns, variant: decoder.variant)
                    decoder.subentityPlans[number] = subplan
                    return subplan
                }
            }
        }
        return plan
    }

    /// Appends the statement's current row, decoded by a plan, to `slots`: one value per
    /// slot of the plan's layout, in slot order (nil for a slot no column fills). Appended,
    /// not written over placeholders: a placeholder written over is destroyed first.
    @inline(__always)
    private func appendValues(_ columns: RowColumns, plan: DecodePlan, to slots: inout ContiguousArray<StoredValue>) {
        for step in plan.slotSteps { slots.append(decodedValue(columns, step: step)) }
    }

    /// The same, into a page being filled.
    /// A compact row and a wide one are each written by a function of its own, called once a
    /// row: inlined together into the statement's loop, they passed the optimizer's budget,
    /// and the column reads and the value decoding were left as calls per value.
    @inline(__always)
    private func appendValues(_ columns: RowColumns, plan: DecodePlan, to page: RowPage) {
        if plan.compactFormat != nil {
            appendCompactValues(columns, plan: plan, to: page)
        } else {
            appendWideValues(columns, plan: plan, to: page)
        }
    }

    @inline(never)
    private func appendCompactValues(_ columns: RowColumns, plan: DecodePlan, to page: RowPage) {
        // Read in place: the plan holds its steps for the row (no bounds check a value).
        plan.slotSteps.withUnsafeBufferPointer { steps in
            page.appendCompactRow { slot, kind, field in writeCompactField(columns, steps: steps, slot: slot, kind: kind, at: field) }
        }
    }

    @inline(never)
    private func appendWideValues(_ columns: RowColumns, plan: DecodePlan, to page: RowPage) {
        plan.slotSteps.withUnsafeBufferPointer { steps in
            page.appendRow(width: steps.count) { decodedValue(columns, step: steps[$0]) }
        }
    }

    /// One step's column of the statement's current row written into its compact field
    /// (`kind`, the step's ``DecodePlan/Kind/compactKind``), for the common cases: the value
    /// decoded as ``AttributeColumn/decode(_:)`` and ``decodedValue(_:step:)`` decode it, but
    /// stored straight into the field (no ``StoredValue`` made and taken apart again). Any
    /// other case gives ``decodedValue(_:step:)``'s value for the format to place.
    @inline(__always)
    private func writeCompactField(
        _ columns: RowColumns, steps: UnsafeBufferPointer<DecodePlan.Step>, slot: Int, kind: CompactRowFormat.Kind, at field: UnsafeMutableRawPointer
    ) -> CompactRowFormat.Written {
        // Driven by the field's kind (a byte the format holds), not the step's enum (copied
        // out of the plan per value): a field of an attribute's own kind is that attribute's
        // (``DecodePlan/Kind/compactKind``), and only its column is needed.
        switch kind {
        case .int64, .double, .string, .date, .bool, .int32, .int16, .float:
            let value = columns[steps[slot].column]
            let storage = value.storageClass
            if storage == SQLValue.nullStorageClass { return .none }
            let isInteger = storage == SQLValue.integerStorageClass
            let isNumber = isInteger || storage == SQLValue.floatStorageClass
            switch kind {
            case .int64 where isInteger: field.initializeMemory(as: Int64.self, to: value.int64)
            case .double where isNumber: field.initializeMemory(as: Double.self, to: value.double)
            case .string where storage == SQLValue.textStorageClass: field.initializeMemory(as: String.self, to: value.text)
            case .date where isNumber: field.initializeMemory(as: Date.self, to: Date(timeIntervalSinceReferenceDate: value.double))
            case .bool where isInteger: field.initializeMemory(as: Bool.self, to: value.int64 != 0)
            case .int32 where isInteger: field.initializeMemory(as: Int32.self, to: Int32(truncatingIfNeeded: value.int64))
            case .int16 where isInteger: field.initializeMemory(as: Int16.self, to: Int16(truncatingIfNeeded: value.int64))
            case .float where isNumber: field.initializeMemory(as: Float.self, to: Float(value.double))
            default: return .value(decodedValue(columns, step: steps[slot]))  // stored with another class: converted
            }
            return .stored
        case .objectID:
            guard case .toOne(let destination, let entityColumn) = steps[slot].kind else { return .value(decodedValue(columns, step: steps[slot])) }
            let key = columns[steps[slot].column]
            if key.storageClass == SQLValue.nullStorageClass { return .none }
            var names = destination
            if let entityColumn {
                let entity = columns[entityColumn]
                if entity.storageClass != SQLValue.nullStorageClass, let actual = idNames(entityNumber: Int(entity.int64)) { names = actual }
            }
            field.initializeMemory(as: ManagedObjectID.self, to: ManagedObjectID(names: names, primaryKey: key.int64))
            return .stored
        case .empty, .data, .uuid, .side:
            return .value(decodedValue(columns, step: steps[slot]))
        }
    }

    /// The value of one step's column in the statement's current row.
    @inline(__always)
    private func decodedValue(_ columns: RowColumns, step: DecodePlan.Step) -> StoredValue {
        let index = step.column
        switch step.kind {
        case .empty:
            return .none
        case .attribute(let attribute):
            return attribute.decode(columns[index])
        case .toOne(let destination, let entityColumn):
            let key = columns[index]
            if key.storageClass == SQLValue.nullStorageClass { return .none }
            var names = destination
            if let entityColumn {
                let entity = columns[entityColumn]
                if entity.storageClass != SQLValue.nullStorageClass, let actual = idNames(entityNumber: Int(entity.int64)) { names = actual }
            }
            return .objectID(ManagedObjectID(names: names, primaryKey: key.int64))
        case .externalBinary:
            let value = columns[index]
            if value.storageClass == SQLValue.nullStorageClass { return .none }
            return StoredValue(ValueCoding.externalBinaryValue(value.sqlValue, storeURL: url))
        }
    }

    /// The plan that decodes rows of `rowEntity` selected with an entity's `columns`.
    func decodePlan(for entity: EntityDescription, rowEntity: EntityDescription, columns: [SelectedColumn], variant: String = "") -> DecodePlan {
        let key = DecodePlanKey(entity: entity.name, rowEntity: rowEntity.name, variant: variant)
        if let plan = decodePlanCache[key] { return plan }
        let layout = rowEntity.propertyLayout
        var steps: [DecodePlan.Step] = []
        var entityColumns: [String: Int] = [:]
        for (i, column) in columns.enumerated() {
            if case .toOne(let relationship, true) = column.target { entityColumns[relationship.name] = i + 3 }
        }
        for (i, column) in columns.enumerated() {
            switch column.target {
            case .attribute(let attribute):
                guard let slot = layout.slot(of: attribute.name), layout.kinds[slot] == .attribute else { continue }
                steps.append(.init(column: i + 3, slot: slot, kind: attribute.usesExternalBinaryStorage ? .externalBinary : .attribute(AttributeColumn(attribute.attributeType))))
            case .toOne(let relationship, let isEntityColumn):
                guard !isEntityColumn, let slot = layout.slot(of: relationship.name), layout.kinds[slot] == .toOne,
                    let declared = rowEntity.relationship(named: relationship.name)
                else { continue }
                steps.append(.init(column: i + 3, slot: slot, kind: .toOne(destination: idNames(entityName: declared.destinationEntityName), entityColumn: entityColumns[relationship.name])))
            }
        }
        let plan = DecodePlan(rowEntity: rowEntity, rowEntityName: rowEntity.name, rowNames: idNames(entityName: rowEntity.name), layout: layout, entityNumber: mapping.entity(rowEntity.name)?.entityNumber ?? -1, steps: steps)
        decodePlanCache[key] = plan
        return plan
    }
}

/// The rows of one run of a SELECT, decoded into ``RowPage``s: per row its key, version,
/// page, place in the page and plan. Objects are made straight from it (no ``StoreRow`` each).
struct DecodedPage {
    /// 24 bytes, not 40: a fetch of 100,000 rows writes 1.6 MB less into cold memory.
    struct Row {
        var primaryKey: Int64
        var version: Int64
        private var packedPage: UInt32
        private var packedBase: UInt16
        private var packedPlan: UInt16

        /// A row at `base` of page `page`, decoded by plan `plan`. A base is at most a page's
        /// ``RowPage/fullUnits`` (12,288 words; a row starts a new page rather than pass it), and a
        /// store has far fewer sub-entities than 65,536; a page number past 2³² would be a
        /// fetch of some 10¹³ values.
        @inline(__always)
        init(primaryKey: Int64, version: Int64, base: Int, page: Int, plan: Int) {
            precondition(base >= 0 && base <= UInt16.max && page >= 0 && page <= UInt32.max && plan >= 0 && plan <= UInt16.max,
                         "decoded row out of range: base \(base), page \(page), plan \(plan)")
            self.primaryKey = primaryKey
            self.version = version
            packedPage = UInt32(truncatingIfNeeded: page)
            packedBase = UInt16(truncatingIfNeeded: base)
            packedPlan = UInt16(truncatingIfNeeded: plan)
        }

        /// Where the row starts in its page: its first slot (a wide page) or word (compact).
        var base: Int { Int(packedBase) }
        /// The index of the row's page in ``pages``.
        var page: Int { Int(packedPage) }
        /// The index of the row's plan in ``plans`` (0: the fetched entity's).
        var plan: Int { Int(packedPlan) }
    }

    /// The most values a wide page holds (a row is never split): 4,096 slots, 96 KiB. A
    /// compact page holds as many bytes: 12,288 words (``RowPage/fullUnits``).
    static let slotsPerPage = 4096

    var pages: [RowPage] = []
    var plans: [DecodePlan] = []
    var rows: [Row] = []

    var count: Int { rows.count }

    /// Gives the row list back for the next fetch (``ScratchArrays``), once the rows'
    /// objects are made; the page is then empty.
    mutating func recycle() {
        ScratchArrays.give(&rows)
    }

    /// The ID of row `index`.
    @inline(__always)
    func objectID(at index: Int) -> ManagedObjectID {
        ManagedObjectID(names: plans[rows[index].plan].rowNames, primaryKey: rows[index].primaryKey)
    }

    /// The primary key of row `index`.
    @inline(__always)
    func primaryKey(at index: Int) -> Int64 { rows[index].primaryKey }

    /// The version (`Z_OPT`) of row `index`.
    @inline(__always)
    func version(at index: Int) -> Int64 { rows[index].version }

    /// The entity of row `index` (the fetched one, or a sub-entity).
    @inline(__always)
    func rowEntity(at index: Int) -> EntityDescription { plans[rows[index].plan].rowEntity }

    /// The values of row `index`, pointing into the page.
    @inline(__always)
    func values(at index: Int) -> ObjectValues {
        ObjectValues(layout: plans[rows[index].plan].layout, page: pages[rows[index].page], base: rows[index].base)
    }

    /// Row `index` as a ``StoreRow``.
    func storeRow(at index: Int) -> StoreRow {
        StoreRow(entity: rowEntity(at: index), objectID: objectID(at: index), version: version(at: index), values: values(at: index))
    }
}

/// Which plan: the fetched entity and the entity of the row (the columns are the fetched
/// entity's ``SQLiteStore/selectedColumns(for:)``; a prefetch may add one after them, unread).
struct DecodePlanKey: Hashable {
    var entity: String
    var rowEntity: String
    /// "" for the entity's own columns; the column list of a partial fetch otherwise.
    var variant: String = ""
}

/// How to decode the rows of one entity: each selected column's slot and type (a class, so a
/// row passes its plan on with one retain).
final class DecodePlan {
    enum Kind {
        /// An attribute's column (see ``AttributeColumn``).
        case attribute(AttributeColumn)
        /// Binary data that may be stored externally: a marker byte, then the bytes or the
        /// name of a file (see ``ValueCoding/decodeExternalBinary(_:storeURL:)``).
        case externalBinary
        /// A to-one's key; `destination` is the declared destination's ``ObjectIDNames`` number.
        case toOne(destination: UInt32, entityColumn: Int?)
        /// No column: the slot stays empty (``slotSteps`` only).
        case empty

        /// The field a compact row keeps the step's values in: the case its values have.
        var compactKind: CompactRowFormat.Kind {
            switch self {
            case .empty: return .empty
            case .toOne: return .objectID
            case .externalBinary: return .data
            case .attribute(let column):
                switch column {
                case .integer64: return .int64
                case .integer32: return .int32
                case .integer16: return .int16
                case .boolean: return .bool
                case .double: return .double
                case .float: return .float
                case .date: return .date
                case .string: return .string
                case .converted(.binaryData): return .data
                case .converted(.uuid): return .uuid
                case .converted: return .side
                }
            }
        }
    }

    struct Step {
        var column: Int
        var slot: Int
        var kind: Kind
    }

    let rowEntity: EntityDescription
    let rowEntityName: String
    /// The ``ObjectIDNames`` number of the row entity in this store.
    let rowNames: UInt32
    let layout: PropertyLayout
    let entityNumber: Int
    /// For each slot of the layout, the step that fills it, or an ``Kind/empty`` one: the
    /// decoder's loop over a row, one step a value, no look-up between.
    let slotSteps: ContiguousArray<Step>
    /// How a page lays out the rows (nil: slots of ``StoredValue``, for a layout of more than
    /// ``CompactRowFormat/maxSlots`` slots).
    let compactFormat: CompactRowFormat?
    /// The units of a page a row takes (``RowPage/units(ofRowOf:format:)``).
    let rowUnits: Int

    init(rowEntity: EntityDescription, rowEntityName: String, rowNames: UInt32, layout: PropertyLayout, entityNumber: Int, steps: [Step]) {
        self.rowEntity = rowEntity
        self.rowEntityName = rowEntityName
        self.rowNames = rowNames
        self.layout = layout
        self.entityNumber = entityNumber
        var slotSteps = ContiguousArray((0..<layout.count).map { Step(column: 0, slot: $0, kind: .empty) })
        // A slot filled by two columns keeps the last, as writing them in column order did.
        for step in steps where step.slot < layout.count { slotSteps[step.slot] = step }
        self.slotSteps = slotSteps
        compactFormat = CompactRowFormat(kinds: slotSteps.map(\.kind.compactKind))
        rowUnits = RowPage.units(ofRowOf: slotSteps.count, format: compactFormat)
    }
}

/// Decodes the rows of one run of a statement: the fetched entity's plan, and the plans of
/// its sub-entities as rows of them come.
final class RowDecoder {
    let entity: EntityDescription
    let columns: [SelectedColumn]
    let plan: DecodePlan
    let variant: String
    let hasSubentities: Bool
    @exclusivity(unchecked) var subentityPlans: [Int: DecodePlan] = [:]

    init(entity: EntityDescription, columns: [SelectedColumn], plan: DecodePlan, variant: String = "") {
        self.entity = entity
        self.hasSubentities = entity.hasSubentities
        self.columns = columns
        self.plan = plan
        self.variant = variant
    }
}
