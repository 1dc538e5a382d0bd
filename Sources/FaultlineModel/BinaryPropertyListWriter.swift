import Foundation

extension BinaryPropertyList {
    /// Writes a property list in Apple's binary format (`bplist00`), the counterpart of
    /// ``parse(_:)``: ``PropertyListValue/uid(_:)`` values are written as `CF$UID`
    /// references, so keyed archives can be written exactly.
    ///
    /// The work is linear in the size of the value and uses no recursion, however deeply
    /// containers nest. Strings, numbers, dates, data and UIDs are written once and shared;
    /// dictionary keys are written in sorted order, so equal values give equal bytes.
    ///
    /// ```swift
    /// let data = BinaryPropertyList.data(.dictionary(["name": .string("Inventory")]))
    /// try BinaryPropertyList.parse(data)  // the same dictionary
    /// ```
    public static func data(_ value: PropertyListValue) -> Data {
        var writer = Writer()
        let top = writer.flatten(value)
        return writer.encode(top: top)
    }

    /// Flattens a value into the format's object table, then writes the table.
    private struct Writer {
        /// One entry of the object table; containers hold object indexes.
        enum Entry {
            case scalar(PropertyListValue)
            case array([Int])
            case dictionary(keys: [Int], values: [Int])
        }

        /// Scalars by value, for sharing. Reals and dates by bit pattern, so `-0.0` and `0.0`
        /// stay apart.
        enum ScalarKey: Hashable {
            case string(String), integer(Int64), real(UInt64), bool(Bool), date(UInt64), data(Data), uid(Int), null
        }

        var entries: [Entry] = []
        var scalars: [ScalarKey: Int] = [:]

        /// The index of a value: scalars are shared, containers get a new entry that
        /// `flatten` fills in from its worklist.
        mutating func index(of value: PropertyListValue, pending: inout [(PropertyListValue, Int)]) -> Int {
            let key: ScalarKey
            switch value {
            case .array, .dictionary:
                entries.append(.array([]))
                pending.append((value, entries.count - 1))
                return entries.count - 1
            case .string(let s): key = .string(s)
            case .integer(let i): key = .integer(i)
            case .real(let d): key = .real(d.bitPattern)
            case .bool(let b): key = .bool(b)
            case .date(let d): key = .date(d.bitPattern)
            case .data(let d): key = .data(d)
            case .uid(let u): key = .uid(u)
            case .null: key = .null
            }
            if let known = scalars[key] { return known }
            entries.append(.scalar(value))
            scalars[key] = entries.count - 1
            return entries.count - 1
        }

        /// Builds the object table from a worklist (no recursion); returns the top index.
        mutating func flatten(_ value: PropertyListValue) -> Int {
            var pending: [(PropertyListValue, Int)] = []
            let top = index(of: value, pending: &pending)
            while let (container, at) = pending.popLast() {
                switch container {
                case .array(let items):
                    var refs: [Int] = []
                    refs.reserveCapacity(items.count)
                    for item in items { refs.append(index(of: item, pending: &pending)) }
                    entries[at] = .array(refs)
                case .dictionary(let dict):
                    var keys: [Int] = [], values: [Int] = []
                    keys.reserveCapacity(dict.count)
                    values.reserveCapacity(dict.count)
                    for (key, item) in dict.sorted(by: { $0.key < $1.key }) {
                        keys.append(index(of: .string(key), pending: &pending))
                        values.append(index(of: item, pending: &pending))
                    }
                    entries[at] = .dictionary(keys: keys, values: values)
                default:
                    break
                }
            }
            return top
        }

        /// The number of bytes (1, 2, 4 or 8) an unsigned value needs.
        static func width(_ value: UInt64) -> Int {
            switch value {
            case ..<0x100: 1
            case ..<0x1_0000: 2
            case ..<0x1_0000_0000: 4
            default: 8
            }
        }

        /// Appends `value` big-endian in `width` (1, 2, 4 or 8) bytes.
        static func append(_ value: UInt64, width: Int, to out: inout [UInt8]) {
            switch width {
            case 1:
                out.append(UInt8(truncatingIfNeeded: value))
            case 2:
                out.append(UInt8(truncatingIfNeeded: value >> 8))
                out.append(UInt8(truncatingIfNeeded: value))
            default:
                var shift = (width - 1) * 8
                while shift >= 0 {
                    out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
                    shift -= 8
                }
            }
        }

        /// A marker with a count: in its low nibble, or 0xF followed by an integer object.
        static func appendMarker(_ type: UInt8, count: Int, to out: inout [UInt8]) {
            if count < 15 {
                out.append(type << 4 | UInt8(count))
            } else {
                out.append(type << 4 | 0x0F)
                appendInteger(Int64(count), to: &out)
            }
        }

        /// Non-negative integers in the fewest of 1, 2, 4 or 8 bytes; negative ones in 8.
        static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
            let bits = UInt64(bitPattern: value)
            let w = value < 0 ? 8 : width(bits)
            out.append(0x10 | UInt8(w.trailingZeroBitCount))
            append(bits, width: w, to: &out)
        }

        func encode(top: Int) -> Data {
            let refSize = Self.width(UInt64(entries.count))
            var out: [UInt8] = Array("bplist00".utf8)
            var offsets: [Int] = []
            offsets.reserveCapacity(entries.count)
            for entry in entries {
                offsets.append(out.count)
                switch entry {
                case .array(let refs):
                    Self.appendMarker(0xA, count: refs.count, to: &out)
                    for r in refs { Self.append(UInt64(r), width: refSize, to: &out) }
                case .dictionary(let keys, let values):
                    Self.appendMarker(0xD, count: keys.count, to: &out)
                    for r in keys { Self.append(UInt64(r), width: refSize, to: &out) }
                    for r in values { Self.append(UInt64(r), width: refSize, to: &out) }
                case .scalar(let value):
                    Self.appendScalar(value, to: &out)
                }
            }
            let tableOffset = out.count
            let offsetSize = Self.width(UInt64(tableOffset))
            for o in offsets { Self.append(UInt64(o), width: offsetSize, to: &out) }
            // Trailer: 5 unused bytes, sort version, offset size, reference size, object
            // count, top object, offset table position.
            out += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(refSize)]
            Self.append(UInt64(entries.count), width: 8, to: &out)
            Self.append(UInt64(top), width: 8, to: &out)
            Self.append(UInt64(tableOffset), width: 8, to: &out)
            return Data(out)
        }

        static func appendScalar(_ value: PropertyListValue, to out: inout [UInt8]) {
            switch value {
            case .null: out.append(0x00)
            case .bool(let b): out.append(b ? 0x09 : 0x08)
            case .integer(let i): appendInteger(i, to: &out)
            case .real(let d):
                out.append(0x23)
                append(d.bitPattern, width: 8, to: &out)
            case .date(let d):
                out.append(0x33)
                append(d.bitPattern, width: 8, to: &out)
            case .data(let d):
                appendMarker(0x4, count: d.count, to: &out)
                out += d
            case .string(let s):
                if s.utf8.allSatisfy({ $0 < 0x80 }) {
                    appendMarker(0x5, count: s.utf8.count, to: &out)
                    out += s.utf8
                } else {
                    let units = Array(s.utf16)
                    appendMarker(0x6, count: units.count, to: &out)
                    for u in units { append(UInt64(u), width: 2, to: &out) }
                }
            case .uid(let u):
                let w = width(UInt64(max(0, u)))
                out.append(0x80 | UInt8(w - 1))
                append(UInt64(max(0, u)), width: w, to: &out)
            case .array, .dictionary:
                break  // containers are entries of their own
            }
        }
    }
}
