import Foundation

/// How the rows of one decode plan are laid out in a compact ``RowPage``: each slot's value
/// at a fixed offset, in its own type, without ``StoredValue``'s tag (Core Data's row
/// snapshots hold their values so).
///
/// A row is a header word, then a field per slot that a column fills, 8 or 16 bytes each
/// (an Int64, Double, Date, Bool or smaller number in 8, a String, Data, UUID or object ID
/// in 16; a slot no column fills takes none). Header bit `n` says slot `n` holds a value
/// (clear: nil); bit `32 + n` says the value is kept aside in the page's side values, its
/// index in the field — a value the field's type cannot hold (TEXT read from an integer
/// column and converted, a Decimal, a URL, an external binary's reference). A row of the
/// benchmark's `Item` (five attributes and a to-one) is 72 bytes, where six ``StoredValue``
/// slots take 144: a fetch writes, keeps and frees half the page memory.
///
/// Made once per plan and shared by its pages; never changed.
final class CompactRowFormat {
    /// What a slot's field holds.
    enum Kind: UInt8 {
        /// No column fills the slot: no field, always nil.
        case empty
        case int64, int32, int16, bool, double, float, date
        case string, data, uuid, objectID
        /// Every value is kept aside (an attribute type without a case of its own).
        case side
    }

    /// A slot's field: where in the row (bytes from the row's start) and its kind.
    struct Field {
        var offset: Int32
        var kind: Kind
    }

    /// The most slots a compact row has (the header's bits); a layout with more is decoded
    /// into slots of ``StoredValue``.
    static let maxSlots = 32

    /// The fields, by slot (``count`` of them), in a buffer of the format's own: a page reads
    /// them through a pointer it keeps, not through the format (a reference whose count the
    /// optimizer then moved around every typed read).
    let fields: UnsafeMutablePointer<Field>
    /// The number of slots.
    let count: Int
    /// The words (8 bytes) a row takes, its header included.
    let stride: Int
    /// The slots whose fields hold a reference (String, Data), destroyed with the page.
    let referenceSlots: ContiguousArray<Int>

    /// A format for slots of `kinds`; nil when there are more than ``maxSlots``.
    init?(kinds: [Kind]) {
        guard kinds.count <= Self.maxSlots else { return nil }
        var offset = MemoryLayout<UInt64>.size
        fields = .allocate(capacity: max(kinds.count, 1))
        count = kinds.count
        var referenceSlots = ContiguousArray<Int>()
        for (slot, kind) in kinds.enumerated() {
            (fields + slot).initialize(to: Field(offset: Int32(offset), kind: kind))
            offset += Self.fieldSize(kind)
            if kind == .string || kind == .data { referenceSlots.append(slot) }
        }
        self.stride = offset / MemoryLayout<UInt64>.size
        self.referenceSlots = referenceSlots
    }

    deinit {
        fields.deallocate()
    }

    /// The bytes a field of `kind` takes: its type's size, a whole number of words (a side
    /// value's index is an `Int`).
    static func fieldSize(_ kind: Kind) -> Int {
        let size: Int
        switch kind {
        case .empty: return 0
        case .int64, .int32, .int16, .bool, .double, .float, .date, .side: size = 8
        case .string: size = MemoryLayout<String>.size
        case .data: size = MemoryLayout<Data>.size
        case .uuid: size = MemoryLayout<UUID>.size
        case .objectID: size = MemoryLayout<ManagedObjectID>.size
        }
        return (size + 7) / 8 * 8
    }

    /// What a row writer did with a field (``writeRow(at:fields:count:aside:_:)``).
    enum Written {
        /// The slot is nil: the field left uninitialized.
        case none
        /// The value is in the field, of the field's type.
        case stored
        /// The value, for the format to place: in the field when it is of the field's type,
        /// else aside (nil: nothing).
        case value(StoredValue)
    }

    /// Writes the row at `row` (``stride`` words, uninitialized): `write(slot, kind, field)`
    /// for each slot that has a field, which writes a value of the field's kind there itself
    /// (the decoder's common cases, no ``StoredValue`` made) or gives the value; values the
    /// field cannot hold are kept aside by `aside`, which gives their index.
    ///
    /// Static, on the format's fields (`count` of them at `fields`): a page writes its rows
    /// without holding its format (bound, the format was retained and released per row).
    @inline(__always)
    static func writeRow(
        at row: UnsafeMutableRawPointer, fields: UnsafePointer<Field>, count: Int, aside: (StoredValue) -> Int,
        _ write: (Int, Kind, UnsafeMutableRawPointer) -> Written
    ) {
        var header: UInt64 = 0
        for slot in 0..<count {
            let field = fields[slot]
            if field.kind.rawValue == Kind.empty.rawValue { continue }
            let at = row + Int(field.offset)
            let stored: StoredValue
            switch write(slot, field.kind, at) {
            case .none: continue
            case .stored:
                header |= 1 &<< UInt64(slot)
                continue
            case .value(let value): stored = value
            }
            switch (field.kind, stored) {
            case (_, .none): continue
            case (.int64, .int64(let v)): at.initializeMemory(as: Int64.self, to: v)
            case (.double, .double(let v)): at.initializeMemory(as: Double.self, to: v)
            case (.string, .string(let v)): at.initializeMemory(as: String.self, to: v)
            case (.date, .date(let v)): at.initializeMemory(as: Date.self, to: v)
            case (.bool, .bool(let v)): at.initializeMemory(as: Bool.self, to: v)
            case (.objectID, .objectID(let v)): at.initializeMemory(as: ManagedObjectID.self, to: v)
            case (.int32, .int32(let v)): at.initializeMemory(as: Int32.self, to: v)
            case (.int16, .int16(let v)): at.initializeMemory(as: Int16.self, to: v)
            case (.float, .float(let v)): at.initializeMemory(as: Float.self, to: v)
            case (.data, .data(let v)): at.initializeMemory(as: Data.self, to: v)
            case (.uuid, .uuid(let v)): at.initializeMemory(as: UUID.self, to: v)
            default:
                at.initializeMemory(as: Int.self, to: aside(stored))
                header |= 1 &<< UInt64(32 &+ slot)
            }
            header |= 1 &<< UInt64(slot)
        }
        row.initializeMemory(as: UInt64.self, to: header)
    }

    /// The value of `slot` in the row at `row`.
    @inline(__always)
    func value(at row: UnsafeRawPointer, slot: Int, side: ContiguousArray<StoredValue>) -> StoredValue {
        precondition(UInt(bitPattern: slot) < UInt(bitPattern: count), "compact row slot \(slot) out of range 0..<\(count)")
        let field = fields[slot]
        let header = row.load(as: UInt64.self)
        if header & (1 << UInt64(slot)) == 0 { return .none }
        let at = row + Int(field.offset)
        if header & (1 << UInt64(32 &+ slot)) != 0 { return side[at.load(as: Int.self)] }
        switch field.kind {
        case .empty, .side: return .none  // never set without the side bit
        case .int64: return .int64(at.load(as: Int64.self))
        case .int32: return .int32(at.load(as: Int32.self))
        case .int16: return .int16(at.load(as: Int16.self))
        case .bool: return .bool(at.load(as: Bool.self))
        case .double: return .double(at.load(as: Double.self))
        case .float: return .float(at.load(as: Float.self))
        case .date: return .date(at.load(as: Date.self))
        case .string: return .string(at.assumingMemoryBound(to: String.self).pointee)
        case .data: return .data(at.assumingMemoryBound(to: Data.self).pointee)
        case .uuid: return .uuid(at.load(as: UUID.self))
        case .objectID: return .objectID(at.load(as: ManagedObjectID.self))
        }
    }

    /// Binds the String and Data fields of the `rows` rows from `start` to their types: after
    /// the rows were copied there as bytes (a page that grew), before they are read through
    /// typed pointers. The other fields are read as raw loads.
    func bindReferences(at start: UnsafeMutableRawPointer, rows: Int) {
        forEachReference(at: start, rows: rows) { field, isString in
            if isString {
                field.bindMemory(to: String.self, capacity: 1)
            } else {
                field.bindMemory(to: Data.self, capacity: 1)
            }
        }
    }

    /// Destroys the references held by the `rows` rows from `start` (their memory stays).
    func destroyRows(at start: UnsafeMutableRawPointer, rows: Int) {
        forEachReference(at: start, rows: rows) { field, isString in
            if isString {
                field.assumingMemoryBound(to: String.self).deinitialize(count: 1)
            } else {
                field.assumingMemoryBound(to: Data.self).deinitialize(count: 1)
            }
        }
    }

    /// Each String or Data field that holds its value (present, not kept aside) in the `rows`
    /// rows from `start`, and whether it is a String's.
    @inline(__always)
    private func forEachReference(at start: UnsafeMutableRawPointer, rows: Int, _ body: (UnsafeMutableRawPointer, Bool) -> Void) {
        if referenceSlots.isEmpty { return }
        // The slots read in place (iterated, the array was retained per row).
        referenceSlots.withUnsafeBufferPointer { referenceSlots in
            var row = start
            for _ in 0..<rows {
                let header = row.load(as: UInt64.self)
                for slot in referenceSlots where header & (1 << UInt64(slot)) != 0 && header & (1 << UInt64(32 &+ slot)) == 0 {
                    body(row + Int(fields[slot].offset), fields[slot].kind.rawValue == Kind.string.rawValue)
                }
                row += stride * MemoryLayout<UInt64>.size
            }
        }
    }
}

/// A compact row where it is in its page, with its format's fields: what a typed read needs,
/// as pointers (valid while the page lives).
struct CompactRow {
    let start: UnsafeRawPointer
    let fields: UnsafePointer<CompactRowFormat.Field>
    let count: Int

    /// The value of `slot` as a `T`: `.some(value)` when the slot's field is `expected`'s kind, which holds `T`s, and holds
    /// the value, `.some(nil)` when the slot is nil, nil when the value is another's (kept
    /// aside, or the field is of another type): the caller then reads it as a ``StoredValue``.
    @inline(__always)
    func read<T>(slot: Int, field expected: CompactField<T>) -> T?? {
        precondition(UInt(bitPattern: slot) < UInt(bitPattern: count), "compact row slot out of range")
        // The slot's present bit and its aside bit, side by side (a slot is below 32: masked
        // shifts, no overshift checks).
        let bits = (start.load(as: UInt64.self) &>> UInt64(slot)) & 0x1_0000_0001
        if bits == 0 { return .some(nil) }
        let field = fields[slot]
        // Raw values compared: the enums' `==` went through memory, and the optimizer then
        // retained the row's page around the read.
        guard bits == 1, field.kind.rawValue == expected.kind.rawValue else { return nil }
        return .some(expected.load(start + Int(field.offset)))
    }
}

/// The kind of compact field that holds values of a type `T`, and how one is read from where
/// it is: given by each typed getter (its own type's), concretely — a protocol's requirements
/// called in the generic read left the optimizer retaining the row's page around every read.
typealias CompactField<T> = (kind: CompactRowFormat.Kind, load: (UnsafeRawPointer) -> T)
