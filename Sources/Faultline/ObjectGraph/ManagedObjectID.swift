import Foundation

/// The identity of a managed object: its store, entity and primary key.
///
/// Object IDs are values that may cross between contexts and threads; objects may not.
/// A saved object's URI is Core Data's `x-coredata://<store UUID>/<Entity>/p<Z_PK>`; an
/// unsaved object has a temporary ID, `x-coredata:///<Entity>/t<UUID><number>`.
///
/// An ID is 16 bytes of plain data: the (entity, store) pair is a number in a process-wide
/// table (`ObjectIDNames`) and the key is the other word, so copying, hashing and comparing
/// IDs — which a context does for every object it registers — touches no reference count and
/// compares no string (Core Data's IDs are likewise a key and a pointer to a shared entity).
public struct ManagedObjectID: Sendable, Hashable, CustomStringConvertible {
    /// The (entity, store) pair, as a number of ``ObjectIDNames``.
    let names: UInt32
    /// 1 for a temporary ID, 0 for a permanent one.
    private let temporaryFlag: UInt32
    /// The primary key of a permanent ID; the number of a temporary one.
    private let number: Int64

    /// The entity name.
    public var entityName: String { ObjectIDNames.names(at: names).entityName }
    /// The store UUID (empty for temporary IDs).
    public var storeIdentifier: String { ObjectIDNames.names(at: names).storeIdentifier }
    /// The primary key (`Z_PK`); 0 for a temporary ID.
    public var primaryKey: Int64 { temporaryFlag == 0 ? number : 0 }
    /// The number of a temporary ID (0 for a permanent one): unique in the process.
    private var temporaryNumber: UInt64 { temporaryFlag == 0 ? 0 : UInt64(bitPattern: number) }

    /// The temporary identifier of an unsaved object, as Core Data makes them: a UUID chosen
    /// once per process followed by a counter (`3F2A…-9C1D42`).
    public var temporaryIdentifier: String? {
        temporaryFlag == 0 ? nil : TemporaryIDs.prefix + String(temporaryNumber)
    }

    /// A permanent ID for a stored row.
    public init(entityName: String, storeIdentifier: String, primaryKey: Int64) {
        self.init(names: ObjectIDNames.number(entityName: entityName, storeIdentifier: storeIdentifier), primaryKey: primaryKey)
    }

    /// A permanent ID whose (entity, store) pair is numbered already: no look-up.
    @inline(__always)
    init(names: UInt32, primaryKey: Int64) {
        self.names = names
        self.temporaryFlag = 0
        self.number = primaryKey
    }

    /// A new temporary ID for an unsaved object.
    public init(temporaryFor entityName: String) {
        self.init(temporaryNames: ObjectIDNames.number(entityName: entityName, storeIdentifier: ""))
    }

    /// A new temporary ID whose (entity, "") pair is numbered already.
    init(temporaryNames names: UInt32) {
        self.names = names
        self.temporaryFlag = 1
        self.number = Int64(bitPattern: TemporaryIDs.next())
    }

    init(names: UInt32, temporaryNumber: UInt64) {
        self.names = names
        self.temporaryFlag = temporaryNumber == 0 ? 0 : 1
        self.number = Int64(bitPattern: temporaryNumber)
    }

    /// Whether the ID is temporary (the object was never saved).
    public var isTemporaryID: Bool { temporaryFlag != 0 }

    /// Core Data's URI form.
    public var uriRepresentation: String {
        if let temporaryIdentifier { return "x-coredata:///\(entityName)/t\(temporaryIdentifier)" }
        return "x-coredata://\(storeIdentifier)/\(entityName)/p\(primaryKey)"
    }

    /// Equal IDs have the same pair number (the table gives one number per pair) and key.
    @inline(__always)
    public static func == (lhs: ManagedObjectID, rhs: ManagedObjectID) -> Bool {
        lhs.number == rhs.number && lhs.names == rhs.names && lhs.temporaryFlag == rhs.temporaryFlag
    }

    /// Hashes the key, the pair number and the temporary flag (when an ID is part of a larger
    /// hashed value; dictionaries and sets of IDs use `_rawHashValue(seed:)`).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(number)
        hasher.combine(UInt64(names) | UInt64(temporaryFlag) << 32)
    }

    /// The hash dictionaries and sets use: the key and the pair number mixed with the table's
    /// seed by a multiply–xorshift finalizer (splitmix64's), not SipHash — a context hashes an
    /// ID for every object it registers and looks up.
    ///
    /// Keys are hashed in aligned groups of eight: the mix picks where a group goes, the
    /// key's low three bits its place in the group, so eight consecutive keys (rows fetched
    /// in key order, objects inserted one after the other) land in eight neighbouring
    /// buckets — two cache lines of keys, one of values — instead of eight random ones. A
    /// fetch of 100,000 objects wrote a cold line of the context's registry per object, and
    /// the next atomic reference count waited for it (hashed one by one, the fetch took 15%
    /// longer, an update of them 10%). Keys spaced by eight still spread over the whole
    /// table (the group is mixed).
    ///
    /// The price is probing: a group colliding with another moves as a block, so a table
    /// three quarters full probes 13.8 buckets a key where keys hashed one by one probe 2.6
    /// (Swift's linear probing, simulated), in neighbouring lines. Groups of four probe 7.7,
    /// and measured 3–6% slower than eight on fetch, insert and update.
    public func _rawHashValue(seed: Int) -> Int {
        let key = UInt64(bitPattern: number)
        let mixed = mixedHash((key >> 3) ^ (UInt64(temporaryFlag) << 63) ^ (UInt64(names) &* 0x9E37_79B9_7F4A_7C15), seed: seed)
        return (mixed & ~7) | Int(key & 7)
    }

    /// Core Data's description: `0x… <x-coredata://…>`, here without an address.
    public var description: String { "<\(uriRepresentation)>" }
}

/// An ID reflects as its entity name, store identifier, primary key and temporary number (what
/// `dump` shows and what predicates over values read by name), not its packed fields.
extension ManagedObjectID: CustomReflectable {
    /// The ID's entity name, store identifier, primary key and temporary number.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "entityName": entityName, "storeIdentifier": storeIdentifier, "primaryKey": primaryKey,
            "temporaryNumber": temporaryNumber,
        ], displayStyle: .struct)
    }
}

/// Object IDs encode and decode (as SwiftData's `PersistentIdentifier` does), so a `#Predicate`
/// can capture one: `#Predicate<Ingredient> { $0.recipe?.objectID == recipeID }`. A temporary
/// ID decodes to the same ID only in the process that made it.
extension ManagedObjectID: Codable {
    private enum CodingKeys: String, CodingKey {
        case entityName, storeIdentifier, primaryKey, temporaryNumber
    }

    /// Decodes an ID from its entity name, store identifier, primary key and temporary number.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let entityName = try container.decode(String.self, forKey: .entityName)
        let storeIdentifier = try container.decode(String.self, forKey: .storeIdentifier)
        let primaryKey = try container.decode(Int64.self, forKey: .primaryKey)
        let temporaryNumber = try container.decode(UInt64.self, forKey: .temporaryNumber)
        let names = ObjectIDNames.number(entityName: entityName, storeIdentifier: storeIdentifier)
        self = temporaryNumber == 0 ? ManagedObjectID(names: names, primaryKey: primaryKey) : ManagedObjectID(names: names, temporaryNumber: temporaryNumber)
    }

    /// Encodes the ID's entity name, store identifier, primary key and temporary number.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(entityName, forKey: .entityName)
        try container.encode(storeIdentifier, forKey: .storeIdentifier)
        try container.encode(primaryKey, forKey: .primaryKey)
        try container.encode(temporaryNumber, forKey: .temporaryNumber)
    }
}

/// The (entity name, store identifier) pairs of object IDs, numbered for the process: an ID
/// holds the number. Pairs are added, never removed (a process sees few: entities × stores).
///
/// Numbering takes a lock; reading a pair by number does not. Entries live in chunks that
/// never move or change once written, and a number reaches a reader only through an ID made
/// after its entry was written (under the lock, or handed over between threads, which
/// synchronises), so the reader sees the entry.
enum ObjectIDNames {
    struct Pair: Hashable {
        let entityName: String
        let storeIdentifier: String
    }

    private static let chunkSize = 1024
    private static let chunkCount = 4096
    private static let lock = NSLock()
    // Written only under `lock`; entries and chunk pointers are immutable once published.
    nonisolated(unsafe) private static var numbers: [Pair: UInt32] = [:]
    nonisolated(unsafe) private static var count = 0
    nonisolated(unsafe) private static let chunks: UnsafeMutablePointer<UnsafeMutablePointer<Pair>?> = {
        let chunks = UnsafeMutablePointer<UnsafeMutablePointer<Pair>?>.allocate(capacity: chunkCount)
        chunks.initialize(repeating: nil, count: chunkCount)
        return chunks
    }()

    /// The number of a pair, numbering it if it is new.
    static func number(entityName: String, storeIdentifier: String) -> UInt32 {
        let pair = Pair(entityName: entityName, storeIdentifier: storeIdentifier)
        return lock.withLock {
            if let number = numbers[pair] { return number }
            let index = count
            // 4 million pairs: an (entity, store) pair per store opened and entity in it.
            precondition(index < chunkSize * chunkCount, "more than \(chunkSize * chunkCount) (entity, store) pairs in one process")
            let chunk: UnsafeMutablePointer<Pair>
            if let existing = chunks[index / chunkSize] {
                chunk = existing
            } else {
                chunk = .allocate(capacity: chunkSize)
                chunks[index / chunkSize] = chunk
            }
            (chunk + index % chunkSize).initialize(to: pair)
            count += 1
            numbers[pair] = UInt32(index)
            return UInt32(index)
        }
    }

    /// The pair of a number given out by ``number(entityName:storeIdentifier:)``.
    @inline(__always)
    static func names(at number: UInt32) -> Pair {
        let index = Int(number)
        guard let chunk = chunks[index / chunkSize] else { return Pair(entityName: "", storeIdentifier: "") }
        return chunk[index % chunkSize]
    }
}

/// The source of temporary IDs: one UUID per process and a counter.
private enum TemporaryIDs {
    static let prefix = UUID().uuidString
    private static let lock = NSLock()
    nonisolated(unsafe) private static var counter: UInt64 = 0  // only touched under `lock`

    static func next() -> UInt64 {
        lock.withLock {
            counter += 1
            return counter
        }
    }
}

/// `bits` mixed with a hash table's seed by splitmix64's multiply–xorshift finalizer: the
/// hash of the keys a context hashes per object (IDs, object identities), instead of SipHash.
@inline(__always)
func mixedHash(_ bits: UInt64, seed: Int) -> Int {
    var x = bits ^ UInt64(bitPattern: Int64(seed))
    x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
    x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
    return Int(bitPattern: UInt(truncatingIfNeeded: x ^ (x >> 31)))
}

/// An object's identity as a dictionary or set key (``ObjectIdentifier``'s, hashed with
/// ``mixedHash(_:seed:)`` instead of SipHash): the context keys every changed object by it.
struct ObjectKey: Hashable {
    let identifier: ObjectIdentifier

    @inline(__always)
    init(_ object: AnyObject) { identifier = ObjectIdentifier(object) }

    func hash(into hasher: inout Hasher) { hasher.combine(identifier) }

    /// Addresses are hashed in aligned groups of eight, as IDs are (see
    /// ``ManagedObjectID/_rawHashValue(seed:)``): the mix of the address's 2 KiB window picks
    /// the group, its 256-byte slice within the window the place in it. Objects made one after
    /// the other sit one after the other in memory (an object is 224 bytes or more), so a run
    /// of changed objects fills neighbouring buckets (when a context's changed objects were
    /// such a table, an update of 100,000 objects took 10% less time; an undo group's objects
    /// and the deletions whose rules ran still are); two objects in one slice take the next
    /// bucket.
    @inline(__always)
    func _rawHashValue(seed: Int) -> Int {
        let address = UInt64(UInt(bitPattern: identifier))
        return (mixedHash(address >> 11, seed: seed) & ~7) | Int((address >> 8) & 7)
    }
}
