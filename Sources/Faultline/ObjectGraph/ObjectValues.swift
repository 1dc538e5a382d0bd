import FaultlineModel
import Foundation

/// The values of one object (or one fetched row) by property: a slot per property of the
/// entity's ``PropertyLayout``, nil where the property has no value (or, for a to-many, where
/// its fault has not fired).
///
/// It reads like a `[String: Any]` (subscript by key, iteration, `keys`, `isEmpty`), but a
/// row is decoded straight into typed slots (``StoredValue``) without hashing a key or boxing
/// a value, copying it shares the slots, and an object with no values yet holds no buffer.
/// A key the layout lacks (an entity built without a model) is kept aside in a dictionary.
///
/// Values fetched together live in one ``RowPage`` (Core Data's row snapshots): the values of
/// an object point at their row there until the object is written, when its slots are copied
/// out. A fetch of many objects so allocates one buffer, not one per object.
struct ObjectValues: Sequence {
    /// The entity's property slots. Not retained: a layout belongs to its entity (the model's
    /// ``EntityDescription``), and values are always held beside their entity — by their
    /// object (or, for a parent-entity fault filled with a sub-entity's row, the object's
    /// `ObjectExtras.layoutOwner`), a ``StoreRow`` or a decode plan — so it outlives them.
    /// (Retaining it cost two reference-count operations per object made, and one per copy of
    /// its values.)
    var layout: PropertyLayout { @inline(__always) get { layoutReference.takeUnretainedValue() } }
    /// ``layout``, held without a reference count: borrowed through it (`_withUnsafeGuaranteedRef`,
    /// read as a field of the values where they are, not through a method, which would copy
    /// them) where a strong reference would cost a retain and a release on the one layout every
    /// object of the entity shares: two atomic operations on one cache line per value read by key.
    let layoutReference: Unmanaged<PropertyLayout>
    /// Where the values are: a row of a page until they are written, then slots of their own.
    /// The two never hold values at once, so they share one word (a reference, tagged in its
    /// spare bits): the value set is 32 bytes, not 40 — an object holds two — and copying or
    /// letting go of one moves one reference count, not two.
    private enum Backing {
        /// The page whose row `base…` holds the values.
        case page(RowPage)
        /// The object's own slots (empty: no values, and no buffer — the empty array's
        /// storage is static).
        case slots(ContiguousArray<StoredValue>)
        /// Slots of their own and values of keys the layout lacks (an entity built without a
        /// model), never empty: rare, so kept here rather than in a field of every value set
        /// (8 bytes twice in every object).
        case extended(ExtendedValues)

        /// Slots of the values' own, with the values of keys the layout lacks when there
        /// are any.
        static func own(_ slots: ContiguousArray<StoredValue>, extra: [String: Any]?) -> Backing {
            guard let extra, !extra.isEmpty else { return .slots(slots) }
            return .extended(ExtendedValues(slots: slots, extra: extra))
        }
    }
    private var backing: Backing = .slots([])
    /// The layout's number of slots, read through the borrowed layout (``layout`` returns it
    /// retained: a retain and a release of the shared layout per read).
    @inline(__always)
    private var layoutCount: Int { layoutReference._withUnsafeGuaranteedRef { $0.count } }
    /// Where the row starts in its page: its first slot (a wide page, at most
    /// ``DecodedPage/slotsPerPage``) or word (a compact one). 32 bits, beside `written`'s 32: the two share
    /// one word.
    private var base: UInt32 = 0
    /// The slots written since these values were made (bit n for slot n; the top bit for
    /// "any": slots past 30, a removal of all values). Comparing an object's values with its
    /// committed ones looks at these slots only: two value sets assigned from the same source
    /// agree everywhere else.
    private var written: UInt32 = 0
    /// Values of keys the layout lacks (an entity built without a model); nil when none.
    private var extra: [String: Any]? {
        if case .extended(let extended) = backing { return extended.extra }
        return nil
    }

    /// Whether keys the layout lacks have values (read without copying them).
    private var hasExtra: Bool {
        if case .extended = backing { return true }
        return false
    }

    /// The values' slots as a buffer of their own (copied out of the page when they are a
    /// page's row).
    private var ownSlots: ContiguousArray<StoredValue> {
        switch backing {
        case .page(let page): return page.values(base: Int(base), width: layoutCount)
        case .slots(let slots): return slots
        case .extended(let extended): return extended.slots
        }
    }

    /// Changes the values of keys the layout lacks (none left: plain slots again), the slots
    /// kept. The box is let go of first: when these values held it alone, the dictionary is
    /// then changed in place, not copied for every change.
    private mutating func changeExtra(_ change: (inout [String: Any]) -> Void) {
        let slots = ownSlots
        var extra = extra ?? [:]
        backing = .slots([])
        change(&extra)
        backing = .own(slots, extra: extra)
    }

    private static let anySlot: UInt32 = 1 << 31
    /// The slots `written` has a bit of their own for; past them, a write sets ``anySlot``.
    static let trackedSlots = 31

    /// The bit of `written` for a slot.
    @inline(__always)
    private static func bit(_ slot: Int) -> UInt32 { slot < trackedSlots ? 1 << UInt32(slot) : anySlot }

    /// No values.
    init(layout: PropertyLayout) {
        layoutReference = Unmanaged.passUnretained(layout)
    }

    /// Values by slot (`slots.count` is the layout's count).
    init(layout: PropertyLayout, slots: ContiguousArray<StoredValue>) {
        layoutReference = Unmanaged.passUnretained(layout)
        backing = .slots(slots)
    }

    /// The values of the row at `base` of a page (`layout.count` slots from there).
    init(layout: PropertyLayout, page: RowPage, base: Int) {
        layoutReference = Unmanaged.passUnretained(layout)
        precondition(base >= 0 && base <= UInt32.max, "row page base \(base) out of range")
        backing = .page(page)
        self.base = UInt32(truncatingIfNeeded: base)
    }

    /// The number of slots held (0 when there are no values).
    private var slotCount: Int {
        switch backing {
        case .page: return layoutCount
        case .slots(let slots): return slots.count
        case .extended(let extended): return extended.slotCount
        }
    }

    /// The value of a key; setting nil removes it.
    subscript(key: String) -> Any? {
        get {
            if let slot = layout.slot(of: key) { return self[slot: slot] }
            return extra?[key]
        }
        set {
            if let slot = layout.slot(of: key) {
                self[slot: slot] = newValue
            } else if newValue != nil || hasExtra {
                changeExtra { $0[key] = newValue }
            }
        }
    }

    /// The value in a slot of the layout.
    subscript(slot slot: Int) -> Any? {
        @inline(__always) get { self[stored: slot].any }
        set { self[stored: slot] = StoredValue(newValue) }
    }

    /// The typed value in a slot of the layout.
    subscript(stored slot: Int) -> StoredValue {
        @inline(__always) get {
            switch backing {
            case .page(let page): return page.value(base: Int(base), slot: slot)
            case .slots(let slots): return slot < slots.count ? slots[slot] : .none
            case .extended(let extended): return extended.value(at: slot)
            }
        }
        set {
            written |= Self.bit(slot)
            var slots: ContiguousArray<StoredValue>
            var extra: [String: Any]?
            switch backing {
            case .page(let page):
                // The row copied out of its page, before the write.
                slots = page.values(base: Int(base), width: layoutCount)
            case .slots(let own):
                slots = own
            case .extended(let extended):
                slots = extended.slots
                extra = extended.extra
            }
            if slots.isEmpty {
                if newValue.isNone { return }
                slots = ContiguousArray(repeating: .none, count: layoutCount)
            }
            // Taken out of `backing` while it is written, so that it is the only reference
            // (written in place, not copied).
            backing = .slots([])
            slots[slot] = newValue
            backing = .own(slots, extra: extra)
        }
    }

    /// A typed read of a slot in place in the row page, when the values are the page's (none
    /// was written since): see ``RowPage/read(base:slot:field:_:)``; nil otherwise. On values
    /// held in place (`inout`), as an object's are.
    @inline(__always)
    static func pageRead<T>(_ values: inout ObjectValues, at slot: Int, field: CompactField<T>, _ match: (UnsafePointer<StoredValue>) -> T?) -> T?? {
        guard case .page(let page) = values.backing else { return nil }
        // Borrowed, not retained for the read: the values hold the page.
        let base = Int(values.base)
        return Unmanaged.passUnretained(page)._withUnsafeGuaranteedRef { $0.read(base: base, slot: slot, field: field, match) }
    }

    /// The object ID in a slot (a to-one relationship's destination), if any.
    @inline(__always)
    func objectID(at slot: Int) -> ManagedObjectID? { self[stored: slot].objectID }

    /// The object IDs in a slot (a fired to-many relationship's destinations), if any.
    @inline(__always)
    func objectIDs(at slot: Int) -> [ManagedObjectID]? { self[stored: slot].objectIDs }

    /// The object ID a key holds (a to-one relationship's destination), if any: typed, no
    /// cast out of `Any`.
    func objectID(forKey key: String) -> ManagedObjectID? {
        if let slot = layout.slot(of: key) { return objectID(at: slot) }
        return extra?[key] as? ManagedObjectID
    }

    /// The object IDs a key holds (a fired to-many relationship's destinations), if any.
    func objectIDs(forKey key: String) -> [ManagedObjectID]? {
        if let slot = layout.slot(of: key) { return objectIDs(at: slot) }
        return extra?[key] as? [ManagedObjectID]
    }

    /// Whether no key has a value. Inlined, so that asking an object's values reads two
    /// fields in place instead of copying the values (three retains and releases).
    @inline(__always)
    var isEmpty: Bool {
        if hasExtra { return false }
        switch backing {
        case .slots(let slots) where slots.isEmpty: return true
        case .page(let page): return page.rowIsEmpty(base: Int(base), width: layoutCount)
        default: return !(0..<slotCount).contains { !self[stored: $0].isNone }
        }
    }

    /// Whether the values hold no reference at all — no slots of their own (the empty
    /// array's storage is static), no page, no extra keys: a new object's, which may then be
    /// written over without letting go of anything (see `ManagedObject.setLoadedRow`).
    @inline(__always)
    var holdsNoReference: Bool {
        guard case .slots(let slots) = backing else { return false }
        return slots.capacity == 0
    }

    /// Removes every value (the layout stays).
    mutating func removeAll() {
        backing = .slots([])
        written = Self.anySlot
    }

    /// The keys that have a value, in slot order.
    var keys: [String] { map(\.key) }

    /// Replaces object IDs held by relationships, objectID attributes and keys kept aside;
    /// other attribute slots are left untouched, and nothing is copied when no ID changes.
    mutating func replaceObjectIDs(_ map: [ManagedObjectID: ManagedObjectID]) {
        for slot in layout.identifierSlots where slot < slotCount {
            switch self[stored: slot] {
            case .objectID(let id):
                if let new = map[id] { self[stored: slot] = .objectID(new) }
            case .objectIDs(let ids) where ids.contains(where: { map[$0] != nil }):
                self[stored: slot] = .objectIDs(ids.map { map[$0] ?? $0 })
            default:
                break
            }
        }
        if hasExtra {
            changeExtra { extra in
                extra = extra.mapValues { value in
                    if let id = value as? ManagedObjectID { return map[id] ?? id }
                    if let ids = value as? [ManagedObjectID] { return ids.map { map[$0] ?? $0 } }
                    return value
                }
            }
        }
    }

    /// Whether a relationship, an objectID attribute or a key kept aside holds a temporary
    /// ID (what ``replaceObjectIDs(_:)`` may replace after a save); values are read in place.
    var holdsTemporaryIDs: Bool {
        if hasExtra { return true }
        for slot in layout.identifierSlots where slot < slotCount {
            switch self[stored: slot] {
            case .objectID(let id):
                if id.isTemporaryID { return true }
            case .objectIDs(let ids):
                if ids.contains(where: \.isTemporaryID) { return true }
            default:
                break
            }
        }
        return false
    }

    /// Whether any key has another value here than in `other` (nil and absent alike; an
    /// absent to-many on the other side counts as empty), as a changed object's values differ
    /// from its committed ones.
    func differs(from other: ObjectValues) -> Bool {
        if hasExtra || other.hasExtra || layout !== other.layout {
            for (key, value) in self {
                let empty = layout.slot(of: key).flatMap(emptyValue(at:))
                if !ManagedObject.valuesEqual(value, other[key] ?? empty) { return true }
            }
            return other.contains { self[$0.key] == nil }
        }
        if slotCount == 0 && other.slotCount == 0 { return false }
        // Values shared with the committed ones since the last fetch or save: unchanged (and
        // not compared, which a value unequal to itself — a NaN — would fail).
        switch (backing, other.backing) {
        case (.page(let page), .page(let otherPage)):
            if page === otherPage, base == other.base { return false }
        case (.slots(let slots), .slots(let otherSlots)):
            let shared = slots.withUnsafeBufferPointer { a in otherSlots.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
            if shared { return false }
        default:
            break
        }
        let mask = written | other.written
        // Slots written on neither side agree (see `written`): with no slot past the tracked
        // ones written, only the written slots are compared, one bit at a time.
        if mask & Self.anySlot == 0 {
            var bits = mask
            let count = layoutCount
            while bits != 0 {
                let slot = bits.trailingZeroBitCount
                bits &= bits &- 1
                if slot < count, !sameStored(self[stored: slot], other[stored: slot], at: slot) { return true }
            }
            return false
        }
        for slot in 0..<layoutCount where !sameStored(self[stored: slot], other[stored: slot], at: slot) { return true }
        return false
    }

    /// ``differs(from:)`` of two value sets held in place (`inout`: neither is copied; see
    /// `ManagedObject.valueDiffers(forKey:)`).
    static func differ(_ a: inout ObjectValues, _ b: inout ObjectValues) -> Bool { a.differs(from: b) }

    /// ``differs(from:at:)`` of two value sets held in place.
    static func differ(_ a: inout ObjectValues, _ b: inout ObjectValues, at key: String) -> Bool { a.differs(from: b, at: key) }

    /// The slots written on either of two value sets of one layout, held in place: a slot
    /// whose bit ``mayDiffer(_:atSlot:)`` finds clear holds the same value on both sides, and
    /// a loop over the slots asks the mask, not the values, for most of them.
    @inline(__always)
    static func writtenSlots(_ a: inout ObjectValues, _ b: inout ObjectValues) -> UInt32 { a.written | b.written }

    /// The slots a ``writtenSlots(_:_:)`` mask names one by one (bit n for slot n); nil when it
    /// says "any" (a slot past the tracked ones written, or all removed): then every slot may
    /// differ.
    @inline(__always)
    static func trackedWrittenSlots(_ written: UInt32) -> UInt32? { written & anySlot == 0 ? written : nil }

    /// Whether a slot may differ, by ``writtenSlots(_:_:)``'s mask.
    @inline(__always)
    static func mayDiffer(_ written: UInt32, atSlot slot: Int) -> Bool { written & (anySlot | bit(slot)) != 0 }

    /// ``differs(from:atSlot:)`` of two value sets held in place.
    @inline(__always)
    static func differ(_ a: inout ObjectValues, _ b: inout ObjectValues, atSlot slot: Int) -> Bool { a.differs(from: b, atSlot: slot) }

    /// Whether a key's value here differs from `other`'s (nil and absent alike); a slot
    /// written on neither side since both were loaded is not compared.
    func differs(from other: ObjectValues, at key: String) -> Bool {
        if !hasExtra, !other.hasExtra, layout === other.layout, let slot = layout.slot(of: key) {
            return differs(from: other, atSlot: slot)
        }
        return !ManagedObject.valuesEqual(self[key], other[key])
    }

    /// ``differs(from:at:)`` by slot, for values of one layout.
    @inline(__always)
    func differs(from other: ObjectValues, atSlot slot: Int) -> Bool {
        if !Self.mayDiffer(written | other.written, atSlot: slot) { return false }
        return !StoredValue.same(self[stored: slot], other[stored: slot])
    }

    /// Whether two values of a slot are the same; an absent to-many on the other side counts
    /// as empty.
    @inline(__always)
    private func sameStored(_ mine: StoredValue, _ theirs: StoredValue, at slot: Int) -> Bool {
        if mine.isNone { return theirs.isNone }
        if theirs.isNone, layoutReference._withUnsafeGuaranteedRef({ $0.kinds[slot] == .toMany }) { return StoredValue.same(mine, .objectIDs([])) }
        return StoredValue.same(mine, theirs)
    }

    /// The value a slot has in a new object: an empty array for a to-many, else nil.
    func emptyValue(at slot: Int) -> Any? {
        layout.kinds[slot] == .toMany ? [ManagedObjectID]() : nil
    }

    /// The values as a dictionary.
    var dictionary: [String: Any] {
        Dictionary(map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
    }

    /// The keys with a value and their values: slots in order, then the keys kept aside.
    func makeIterator() -> AnyIterator<(key: String, value: Any)> {
        var slot = 0
        var rest = (extra ?? [:]).makeIterator()
        let values = self
        let count = slotCount
        let names = layout.names
        return AnyIterator {
            while slot < count {
                defer { slot += 1 }
                if let value = values[stored: slot].any { return (names[slot], value) }
            }
            return rest.next()
        }
    }
}

/// The slots and the values of keys the layout lacks of a value set that has both
/// (``ObjectValues``' rare case), shared by its copies and never changed: a change makes
/// another.
final class ExtendedValues {
    let slots: ContiguousArray<StoredValue>
    let extra: [String: Any]

    init(slots: ContiguousArray<StoredValue>, extra: [String: Any]) {
        self.slots = slots
        self.extra = extra
    }

    // Out of line, the reads `ObjectValues` inlines everywhere: inlined, reading a field of
    // this class from the value set's backing made the optimizer hold the backing's reference
    // (a retain and a release in every function that reads values, whichever case they are).

    /// The number of slots.
    @inline(never)
    var slotCount: Int { slots.count }

    /// The value in a slot (none past the slots).
    @inline(never)
    func value(at slot: Int) -> StoredValue { slot < slots.count ? slots[slot] : .none }
}

/// The values of rows fetched together, one row after the other: objects read their values
/// here until written.
///
/// Compact (``format`` set: a decoder's page), each row is laid out by the plan's
/// ``CompactRowFormat``: a header word and each value in its own type, 8 or 16 bytes. Wide
/// (no format: a layout of more than ``CompactRowFormat/maxSlots`` slots, and the tests' pages),
/// each row is as many ``StoredValue`` slots as its entity's layout has. Either way a row's
/// place is its ``base``: its first unit (a slot when wide, a word when compact).
///
/// A buffer of its own, filled once by the decoder and read-only from then on: decoding
/// writes each value in place (no array's uniqueness and capacity checked per value), and
/// reading one is a bounds check and a load.
final class RowPage {
    /// How the rows are laid out; nil for slots of ``StoredValue``.
    let format: CompactRowFormat?
    /// The format's fields and their number (see ``CompactRowFormat/fields``): a typed read
    /// finds its field here, not through the format.
    private let fields: UnsafePointer<CompactRowFormat.Field>?
    private let fieldCount: Int
    /// The format's ``CompactRowFormat/stride`` (0 for a wide page).
    private let rowStride: Int
    @exclusivity(unchecked) private var bytes: UnsafeMutableRawPointer
    /// Room, in units (slots when wide, words when compact).
    @exclusivity(unchecked) private var capacity: Int
    /// The number of units filled.
    @exclusivity(unchecked) private(set) var count = 0
    /// Values of compact rows their fields cannot hold (see ``CompactRowFormat``).
    @exclusivity(unchecked) private var side = ContiguousArray<StoredValue>()

    /// The bytes of a full-size page (4,096 slots, 12,288 words): 96 KiB.
    static let blockBytes = DecodedPage.slotsPerPage * MemoryLayout<StoredValue>.stride

    /// An empty wide page with room for `capacity` values (it grows while it is being filled).
    convenience init(capacity: Int) {
        self.init(format: nil, capacity: capacity)
    }

    /// An empty page of rows laid out by `format` (nil: wide), with room for `capacity` units
    /// (it grows while it is being filled).
    init(format: CompactRowFormat?, capacity: Int) {
        self.format = format
        fields = format.map { UnsafePointer($0.fields) }
        fieldCount = format?.count ?? 0
        rowStride = format?.stride ?? 0
        self.capacity = max(capacity, 1)
        bytes = Self.allocate(units: self.capacity, wide: format == nil)
    }

    deinit {
        if let format {
            format.destroyRows(at: bytes, rows: count / format.stride)
        } else {
            StoredValue.deinitialize(wideStorage, count: count)
        }
        Self.deallocate(bytes, units: capacity, wide: format == nil)
    }

    /// The units a full-size page holds: a page starts another once the next row would pass it.
    var fullUnits: Int { Self.fullUnits(format: format) }

    /// ``fullUnits`` of a page of `format`.
    static func fullUnits(format: CompactRowFormat?) -> Int { format == nil ? DecodedPage.slotsPerPage : blockBytes / MemoryLayout<UInt64>.size }

    /// The units a row of `width` slots takes in a page of `format`.
    static func units(ofRowOf width: Int, format: CompactRowFormat?) -> Int { format?.stride ?? width }

    private static func unitSize(wide: Bool) -> Int { wide ? MemoryLayout<StoredValue>.stride : MemoryLayout<UInt64>.size }

    /// The slots of a wide page.
    @inline(__always)
    private var wideStorage: UnsafeMutablePointer<StoredValue> { bytes.assumingMemoryBound(to: StoredValue.self) }

    /// Room for `units`: a kept block when the page is full size (see ``spareBlocks``); a wide
    /// page's memory bound to its values.
    private static func allocate(units: Int, wide: Bool) -> UnsafeMutableRawPointer {
        let byteCount = units * unitSize(wide: wide)
        let raw: UnsafeMutableRawPointer
        if byteCount == blockBytes, let block = spareBlocks.take(count: blockBytes) {
            raw = UnsafeMutableRawPointer(block)
        } else {
            raw = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 16)
        }
        if wide { raw.bindMemory(to: StoredValue.self, capacity: units) }
        return raw
    }

    private static func deallocate(_ bytes: UnsafeMutableRawPointer, units: Int, wide: Bool) {
        if units * unitSize(wide: wide) == blockBytes {
            spareBlocks.keep(bytes.bindMemory(to: UInt8.self, capacity: blockBytes), count: blockBytes)
        } else {
            bytes.deallocate()
        }
    }

    /// Full-size page buffers (96 KiB) let go of, kept for the next pages, up to 128 of them
    /// (12 MiB, the pages of some 170,000 compact rows of five values). A fetch of 100,000
    /// objects fills some 60 pages and lets go of them when its objects go; glibc then gave
    /// much of that memory back to the system, and the next fetch took it again page fault by
    /// page fault. A kept block holds no values.
    static let spareBlocks = SpareBuffers<UInt8>(limit: 128) { UnsafeMutableRawPointer($0).deallocate() }

    // MARK: Wide pages

    /// The value at `index` of a wide page (below ``count``).
    @inline(__always)
    subscript(index: Int) -> StoredValue {
        precondition(format == nil && index >= 0 && index < count, "row page index \(index) out of range 0..<\(count)")
        return wideStorage[index]
    }

    /// Where the value at `index` of a wide page (below ``count``) is: valid while the page
    /// lives, as its values do not move once it is filled.
    @inline(__always)
    func pointer(to index: Int) -> UnsafePointer<StoredValue> {
        precondition(format == nil && UInt(bitPattern: index) < UInt(bitPattern: count), "row page index \(index) out of range 0..<\(count)")
        return UnsafePointer(wideStorage + index)
    }

    /// A copy of the values in `range` of a wide page.
    func values(in range: Range<Int>) -> ContiguousArray<StoredValue> {
        precondition(format == nil && range.lowerBound >= 0 && range.upperBound <= count, "row page range \(range) out of range 0..<\(count)")
        return ContiguousArray(UnsafeBufferPointer(start: wideStorage + range.lowerBound, count: range.count))
    }

    /// Appends a value to a wide page, while it is being filled (no object reads it yet).
    @inline(__always)
    func append(_ value: StoredValue) {
        precondition(format == nil, "a value appended to a compact row page")
        if count == capacity { grow() }
        (wideStorage + count).initialize(to: value)
        count += 1
    }

    /// Appends a row of `width` values to a wide page, `value(i)` the row's `i`th, while the
    /// page is being filled: room made once for the row, and the count moved once — not a
    /// capacity check and a count written back to the page per value, a chain through memory
    /// the decoder waited on at every value.
    @inline(__always)
    func appendRow(width: Int, _ value: (Int) -> StoredValue) {
        precondition(format == nil, "a wide row appended to a compact row page")
        while count &+ width > capacity { grow() }
        let row = wideStorage + count
        for index in 0..<width { (row + index).initialize(to: value(index)) }
        count &+= width
    }

    // MARK: Rows of either kind

    /// Appends a row laid out by the page's format (a compact page), written field by field by
    /// `write` (see ``CompactRowFormat/writeRow(at:fields:count:aside:_:)``), while the page is being filled.
    @inline(__always)
    func appendCompactRow(_ write: (Int, CompactRowFormat.Kind, UnsafeMutableRawPointer) -> CompactRowFormat.Written) {
        guard let fields else { preconditionFailure("a compact row appended to a wide row page") }
        while count &+ rowStride > capacity { grow() }
        CompactRowFormat.writeRow(at: bytes + count &* MemoryLayout<UInt64>.size, fields: fields, count: fieldCount, aside: keepAside, write)
        count &+= rowStride
    }

    /// Keeps a value of a compact row aside; returns its index. Out of line: rare, and its
    /// array's uniqueness was otherwise checked for every row.
    @inline(never)
    private func keepAside(_ value: StoredValue) -> Int {
        side.append(value)
        return side.count - 1
    }

    /// The start of the compact row at `base` (a row's first word, below ``count``).
    @inline(__always)
    private func compactRow(_ base: Int) -> UnsafeRawPointer {
        precondition(UInt(bitPattern: base) < UInt(bitPattern: count), "row page row \(base) out of range 0..<\(count)")
        // A row's start (every base comes from the decoder): checked in debug builds, a
        // division per read being too dear in release ones.
        assert(rowStride > 0 && base % rowStride == 0 && base + rowStride <= count, "row page base \(base) is not a row's start")
        return UnsafeRawPointer(bytes + base &* MemoryLayout<UInt64>.size)
    }

    /// The compact row at `base` as pointers (see ``CompactRow``); nil for a wide page.
    @inline(__always)
    func compactRow(base: Int) -> CompactRow? {
        guard let fields else { return nil }
        return CompactRow(start: compactRow(base), fields: fields, count: fieldCount)
    }

    /// The value of `slot` of the row at `base`.
    @inline(__always)
    func value(base: Int, slot: Int) -> StoredValue {
        if format != nil { return compactValue(base: base, slot: slot) }
        return self[base &+ slot]
    }

    /// ``value(base:slot:)`` of a compact page, out of line: inlined into every reader of a
    /// value set, its switch over the field kinds made their callers too big to be inlined in
    /// turn (a fetch's loop over its rows among them).
    @inline(never)
    private func compactValue(base: Int, slot: Int) -> StoredValue {
        guard let format else { return self[base &+ slot] }
        return format.value(at: compactRow(base), slot: slot, side: side)
    }

    /// Whether the `width` slots of the row at `base` are all nil.
    @inline(__always)
    func rowIsEmpty(base: Int, width: Int) -> Bool {
        if fields != nil {
            let header = compactRow(base).load(as: UInt64.self)
            // The present bits of the row's slots (at most 32: below the bits of values aside).
            let slots = min(width, fieldCount)
            let mask: UInt64 = slots >= 32 ? 0xFFFF_FFFF : (1 &<< UInt64(slots)) &- 1
            return header & mask == 0
        }
        for slot in 0..<width where !self[base &+ slot].isNone { return false }
        return true
    }

    /// A copy of the `width` values of the row at `base`.
    func values(base: Int, width: Int) -> ContiguousArray<StoredValue> {
        guard let format else { return values(in: base..<base + width) }
        precondition(width == format.count, "row page row of \(format.count) slots read as \(width)")
        let row = compactRow(base)
        var values = ContiguousArray<StoredValue>()
        values.reserveCapacity(width)
        for slot in 0..<width { values.append(format.value(at: row, slot: slot, side: side)) }
        return values
    }

    /// A typed read of `slot` of the row at `base`, in place: `.some(value)` (nil for an empty
    /// slot) when the slot holds a `T` where it is — a compact field of `T`'s type, or a wide
    /// slot `match` matches; nil when the value is another (the caller reads it as a
    /// ``StoredValue``).
    @inline(__always)
    func read<T>(base: Int, slot: Int, field: CompactField<T>, _ match: (UnsafePointer<StoredValue>) -> T?) -> T?? {
        if let row = compactRow(base: base) { return row.read(slot: slot, field: field) }
        let stored = pointer(to: base &+ slot)
        // The type's case first: the common one, and an empty slot never matches it.
        if let value = match(stored) { return .some(value) }
        if case .none = stored.pointee { return .some(nil) }
        return nil
    }

    /// Doubles the room, up to a full-size page's (then a block of the pool, see
    /// ``spareBlocks``: a compact page's 12,288 words are no power of two, and doubling from 64
    /// passed them for a 128 KiB block the pool never keeps), and doubles again past it (a
    /// row wider than a page).
    private func grow() {
        let wide = format == nil
        let full = fullUnits
        let grownCapacity = capacity < full && capacity * 2 > full ? full : capacity * 2
        let grown = Self.allocate(units: grownCapacity, wide: wide)
        if wide {
            grown.assumingMemoryBound(to: StoredValue.self).moveInitialize(from: wideStorage, count: count)
        } else if let format {
            // Compact rows move as bytes (every Swift value is bitwise movable); the fields
            // read through typed pointers are bound to their types again where they now are.
            grown.copyMemory(from: bytes, byteCount: count * MemoryLayout<UInt64>.size)
            format.bindReferences(at: grown, rows: count / format.stride)
        }
        Self.deallocate(bytes, units: capacity, wide: wide)
        bytes = grown
        capacity = grownCapacity
    }

    /// The room, in units (for tests).
    var capacityUnits: Int { capacity }
}
