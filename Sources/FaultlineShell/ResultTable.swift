import Foundation

/// One value of a result, typed so each output mode can write it properly: JSON numbers stay
/// numbers and to-many values arrays, nil is `null`, a table shows `nil`, bytes are hex in a
/// table and base64 in JSON and CSV, objects are handles in a table and URIs elsewhere.
enum Cell: Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    /// A Decimal, as its exact digits (a number in JSON).
    case decimal(String)
    /// Text, shown as it is.
    case text(String)
    /// Bytes (a Binary or Transformable value, a BLOB of `.raw`).
    case binary(Data)
    /// An object: its handle (`$4`) for the person, its URI for files and programs.
    case object(handle: String, uri: String)
    /// A handle in the `#` column, or another word that names an object in a table.
    case reference(String)
    /// The values of a to-many key path or relationship (an empty list is an empty to-many).
    case list([Cell])
    /// Keys and values (a Transformable dictionary).
    case map([Entry])
    /// A to-many relationship whose fault has not fired: not known to be empty.
    case fault

    /// One key and value of a ``Cell/map(_:)``.
    struct Entry: Equatable {
        var key: String
        var value: Cell
    }

    /// How a mode writes values: for a person (table, box, line, markdown), as plain text
    /// (list, tabs, html), in CSV, or in JSON.
    enum Style {
        case display, plain, csv
    }

    /// The text a table shows.
    var display: String { text(.display) }

    /// The text of the value in a style (JSON has ``json``, SQL literals ``Renderer/sqlLiteral(_:)``).
    func text(_ style: Style) -> String {
        switch self {
        case .null: return "nil"
        case .bool(let b): return b ? "true" : "false"
        case .integer(let i): return String(i)
        case .real(let d): return Cell.format(d)
        case .decimal(let s), .text(let s), .reference(let s): return s
        case .binary(let data):
            switch style {
            case .display: return Cell.shortHex(data)
            case .plain: return Cell.hex(data)
            case .csv: return data.base64EncodedString()
            }
        case .object(let handle, let uri): return style == .display ? handle : uri
        case .list(let items):
            if style == .csv { return json }
            if items.isEmpty { return style == .display ? "(empty)" : "" }
            return items.map { item in
                if case .list = item { return "(" + item.text(style) + ")" }
                return item.text(style)
            }.joined(separator: ", ")
        case .map(let entries):
            if style == .csv { return json }
            return "{" + entries.map { "\($0.key): \($0.value.text(style))" }.joined(separator: ", ") + "}"
        case .fault: return "(not loaded)"
        }
    }

    /// A double without a needless `.0` (`3`, `2.5`, `1e+20`), as NSNumber prints it.
    static func format(_ d: Double) -> String {
        if d.isFinite, d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        return String(d)
    }

    /// Whether a Decimal's text can stand as a number in JSON and SQL (not NaN).
    static func isNumeral(_ s: String) -> Bool {
        Decimal(string: s) != nil && !s.contains("NaN")
    }

    /// Every byte in hex: `62706c6973743030`.
    static func hex(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count * 2)
        for byte in data {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Bytes for a person: all of them in hex when few, else the first 16 and the count
    /// (`62706c69737430300102… (1234 bytes)`).
    static func shortHex(_ data: Data) -> String {
        if data.isEmpty { return "(0 bytes)" }
        if data.count <= 16 { return hex(data) }
        return hex(data.prefix(16)) + "… (\(data.count) bytes)"
    }

    /// The value as a JSON fragment.
    var json: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .integer(let i): return String(i)
        case .real(let d): return d.isFinite ? Cell.format(d) : "null"
        case .decimal(let s): return Cell.isNumeral(s) ? s : Cell.jsonString(s)
        case .text(let s), .reference(let s): return Cell.jsonString(s)
        case .binary(let data): return Cell.jsonString(data.base64EncodedString())
        case .object(_, let uri): return Cell.jsonString(uri)
        case .list(let items): return "[" + items.map(\.json).joined(separator: ",") + "]"
        case .map(let entries): return "{" + entries.map { Cell.jsonString($0.key) + ":" + $0.value.json }.joined(separator: ",") + "}"
        case .fault: return "{\"fault\":true}"
        }
    }

    static func jsonString(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20: out += String(format: "\\u%04x", c.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// A result to print: column headers and rows of cells.
struct ResultTable {
    var headers: [String]
    var rows: [[Cell]]
    /// Whether the first column is the handles (`#`, `$1`…): session-local names that files
    /// and programs cannot use, so csv, json and the other machine modes leave it out
    /// unless `.handles on`.
    var hasHandleColumn = false
    /// Whether columns may be left out when the table is wider than ``Renderer/maxWidth``
    /// (a fetch's default columns; not columns the person asked for with `show`).
    var mayLeaveOutColumns = false
}

/// The output modes of `.mode`, as in the sqlite3 shell.
enum OutputMode: String, CaseIterable {
    case table, box, line, csv, json, markdown, list, tabs, quote, insert, html

    /// Modes for a person to read: handles, short values, cut to the width.
    var isForPeople: Bool { [.table, .box, .line, .markdown].contains(self) }
}

/// Writes a ``ResultTable`` in one of the ``OutputMode``s.
struct Renderer {
    var mode: OutputMode = .table
    /// Whether headers are written (`.headers on|off`; table, box and markdown always have them).
    var headers = true
    /// Whether to use ANSI colour (a terminal, and `NO_COLOR` unset).
    var color = false
    /// `.separator COL [ROW]`: between columns and rows in list mode (sqlite3's `|` and newline).
    var columnSeparator = "|"
    var rowSeparator = "\n"
    /// `.nullvalue TEXT`: what list, tabs and csv modes show for nil (sqlite3: nothing).
    var nullValue = ""
    /// The table `insert` mode writes into (sqlite3's default, `"table"`, or `.mode insert NAME`).
    var insertTable = "\"table\""
    /// `.handles on|off|auto`: whether the handle column is written; nil (auto) writes it in
    /// the modes for people only.
    var handles: Bool?
    /// The most terminal columns a line of a table, box, markdown or line-mode result takes
    /// (`.width N|auto|off`); nil for no limit. Values are cut with `…` to fit.
    var maxWidth: Int?

    /// The least a column is narrowed to before columns are left out.
    static let minimumColumnWidth = 6

    /// What ``render(_:)`` wrote, and the columns it left out to fit ``maxWidth``.
    struct Rendered {
        var text: String
        var omittedColumns: [String]
    }

    func render(_ table: ResultTable) -> String { rendering(table).text }

    func rendering(_ table: ResultTable) -> Rendered {
        var table = table
        if table.hasHandleColumn, !(handles ?? mode.isForPeople) {
            table.headers.removeFirst()
            table.rows = table.rows.map { Array($0.dropFirst()) }
            table.hasHandleColumn = false
        }
        switch mode {
        case .table: return grid(table, box: false)
        case .box: return grid(table, box: true)
        case .markdown: return markdown(table)
        case .line: return Rendered(text: lines(table), omittedColumns: [])
        case .csv: return Rendered(text: csv(table), omittedColumns: [])
        case .json: return Rendered(text: json(table), omittedColumns: [])
        case .list: return Rendered(text: separated(table, column: columnSeparator, row: rowSeparator), omittedColumns: [])
        case .tabs: return Rendered(text: separated(table, column: "\t", row: "\n"), omittedColumns: [])
        case .quote: return Rendered(text: quoted(table), omittedColumns: [])
        case .insert: return Rendered(text: inserts(table), omittedColumns: [])
        case .html: return Rendered(text: html(table), omittedColumns: [])
        }
    }

    /// sqlite3's list and tabs modes: values as they are, nil as `.nullvalue`.
    private func separated(_ table: ResultTable, column: String, row: String) -> String {
        var out: [String] = []
        if headers { out.append(table.headers.joined(separator: column)) }
        for cells in table.rows { out.append(cells.map { $0 == .null ? nullValue : $0.text(.plain) }.joined(separator: column)) }
        return out.joined(separator: row)
    }

    /// An SQL literal for a value: `NULL`, numbers, `'text'` with quotes doubled, `X'hex'`.
    static func sqlLiteral(_ cell: Cell) -> String {
        switch cell {
        case .null: return "NULL"
        case .bool(let b): return b ? "1" : "0"
        case .integer(let i): return String(i)
        case .real(let d): return d.isFinite ? "\(d)" : (d > 0 ? "1e999" : d < 0 ? "-1e999" : "NULL")
        case .decimal(let s): return Cell.isNumeral(s) ? s : "'" + s + "'"
        case .binary(let data): return "X'" + Cell.hex(data).uppercased() + "'"
        case .text, .reference, .object, .list, .map, .fault:
            let t = cell.text(.csv)
            return "'" + t.replacingOccurrences(of: "'", with: "''") + "'"
        }
    }

    /// sqlite3's quote mode: each value as an SQL literal.
    private func quoted(_ table: ResultTable) -> String {
        var out: [String] = []
        if headers { out.append(table.headers.map { Renderer.sqlLiteral(.text($0)) }.joined(separator: ",")) }
        for cells in table.rows { out.append(cells.map(Renderer.sqlLiteral).joined(separator: ",")) }
        return out.joined(separator: "\n")
    }

    /// sqlite3's insert mode: an `INSERT INTO` statement per row.
    private func inserts(_ table: ResultTable) -> String {
        let columns = table.headers.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(separator: ",")
        return table.rows.map { cells in
            "INSERT INTO \(insertTable)(\(columns)) VALUES(" + cells.map(Renderer.sqlLiteral).joined(separator: ",") + ");"
        }.joined(separator: "\n")
    }

    /// sqlite3's html mode: `<TR>` rows of `<TD>` cells, escaped.
    private func html(_ table: ResultTable) -> String {
        func escape(_ s: String) -> String {
            s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
                .replacingOccurrences(of: "\"", with: "&quot;")
        }
        var out: [String] = []
        if headers { out.append("<TR>" + table.headers.map { "<TH>\(escape($0))</TH>" }.joined() + "\n</TR>") }
        for cells in table.rows { out.append("<TR>" + cells.map { "<TD>\(escape($0 == .null ? nullValue : $0.text(.plain)))</TD>" }.joined() + "\n</TR>") }
        return out.joined(separator: "\n")
    }

    /// Terminal columns a string takes: wide East Asian characters and emoji take two,
    /// combining marks none.
    static func displayWidth(_ s: String) -> Int {
        s.unicodeScalars.reduce(0) { $0 + width(of: $1) }
    }

    private static func width(of scalar: Unicode.Scalar) -> Int {
        let v = scalar.value
        if scalar.properties.generalCategory == .nonspacingMark || scalar.properties.generalCategory == .enclosingMark || v == 0x200D || (0xFE00...0xFE0F).contains(v) { return 0 }
        if scalar.properties.isEmojiPresentation { return 2 }
        let wide = (0x1100...0x115F).contains(v) || (0x2E80...0xA4CF).contains(v) || (0xAC00...0xD7A3).contains(v)
            || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v) || (0xFF00...0xFF60).contains(v)
            || (0xFFE0...0xFFE6).contains(v) || (0x20000...0x3FFFD).contains(v)
        return wide ? 2 : 1
    }

    /// Text cut to `width` terminal columns, ending in `…` when something was cut (whole
    /// characters only, so a combining mark stays with its letter).
    static func cut(_ s: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        guard displayWidth(s) > width else { return s }
        var out = ""
        var used = 0
        for character in s {
            let w = character.unicodeScalars.reduce(0) { $0 + Renderer.width(of: $1) }
            if used + w > width - 1 { break }
            out.append(character)
            used += w
        }
        return out + "…"
    }

    /// A value on one line: a newline is shown as `⏎`, other control characters escaped, so
    /// a table's lines stay whole.
    static func printable(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return s }
        var out = ""
        var previousWasCR = false
        for scalar in s.unicodeScalars {
            defer { previousWasCR = scalar == "\r" }
            switch scalar {
            case "\n": if !previousWasCR { out += "⏎" }
            case "\r": out += "⏎"
            case "\t": out += "\\t"
            case let c where c.value < 0x20 || c.value == 0x7F: out += String(format: "\\x%02X", c.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private func styled(_ cell: Cell, _ text: String) -> String {
        guard color else { return text }
        switch cell {
        case .null, .fault: return "\u{1B}[2m\(text)\u{1B}[0m"
        case .reference, .object: return "\u{1B}[36m\(text)\u{1B}[0m"
        default: return text
        }
    }

    /// Column widths that fit `maxWidth` (`overhead` columns of borders per column plus
    /// `fixed`), the widest columns narrowed first; the columns left out (from the end) when
    /// even the narrowest do not fit and the table allows it.
    private func fittedWidths(_ natural: [Int], headers: [Int], overhead: Int, fixed: Int, mayLeaveOut: Bool) -> (widths: [Int], kept: Int) {
        guard let maxWidth else { return (natural, natural.count) }
        func total(_ widths: [Int]) -> Int { widths.reduce(0, +) + overhead * widths.count + fixed }
        if total(natural) <= maxWidth { return (natural, natural.count) }
        let minimum = natural.indices.map { min(natural[$0], max(Renderer.minimumColumnWidth, min(headers[$0], 12))) }
        var kept = natural.count
        if mayLeaveOut {
            // Keep at least the handle column and one more.
            while kept > 2, total(Array(minimum.prefix(kept))) > maxWidth { kept -= 1 }
        }
        let keptNatural = Array(natural.prefix(kept))
        let keptMinimum = Array(minimum.prefix(kept))
        if total(keptNatural) <= maxWidth { return (keptNatural, kept) }
        // The largest cap for which every column is min(natural, max(cap, minimum)) and fits.
        func widths(cap: Int) -> [Int] { keptNatural.indices.map { min(keptNatural[$0], max(cap, keptMinimum[$0])) } }
        var low = 0
        var high = keptNatural.max() ?? 0
        while low < high {
            let middle = (low + high + 1) / 2
            if total(widths(cap: middle)) <= maxWidth { low = middle } else { high = middle - 1 }
        }
        var result = widths(cap: low)
        // Give the columns left over to the cut columns, one each, left to right.
        var spare = maxWidth - total(result)
        for i in result.indices where spare > 0 && result[i] < keptNatural[i] {
            result[i] += 1
            spare -= 1
        }
        return (result, kept)
    }

    /// A table's header and cell texts (made one-line by `text`), cut to the widths that fit,
    /// with the columns left out.
    private func fitted(_ table: ResultTable, _ text: (String) -> String) -> (headers: [String], rows: [[String]], widths: [Int], omitted: [String]) {
        let texts = table.rows.map { $0.map { text($0.display) } }
        let headerTexts = table.headers.map(text)
        var natural = headerTexts.map(Renderer.displayWidth)
        for row in texts {
            for (i, text) in row.enumerated() where i < natural.count { natural[i] = max(natural[i], Renderer.displayWidth(text)) }
        }
        let (widths, kept) = fittedWidths(natural, headers: headerTexts.map(Renderer.displayWidth), overhead: 3, fixed: 1, mayLeaveOut: table.mayLeaveOutColumns)
        return (
            headerTexts.prefix(kept).enumerated().map { Renderer.cut($1, to: widths[$0]) },
            texts.map { row in row.prefix(kept).enumerated().map { Renderer.cut($1, to: widths[$0]) } },
            widths, Array(table.headers.dropFirst(kept))
        )
    }

    private func grid(_ table: ResultTable, box: Bool) -> Rendered {
        let (headerTexts, texts, widths, omitted) = fitted(table, Renderer.printable)
        let (h, v, tl, tm, tr, ml, mm, mr, bl, bm, br) = box
            ? ("─", "│", "┌", "┬", "┐", "├", "┼", "┤", "└", "┴", "┘")
            : ("-", "|", "+", "+", "+", "+", "+", "+", "+", "+", "+")
        func rule(_ l: String, _ m: String, _ r: String) -> String {
            l + widths.map { String(repeating: h, count: $0 + 2) }.joined(separator: m) + r
        }
        func line(_ cells: [String], _ raw: [Cell]?) -> String {
            v + cells.enumerated().map { i, text in
                let pad = String(repeating: " ", count: max(0, widths[i] - Renderer.displayWidth(text)))
                let shown = raw.map { styled($0[i], text) } ?? (color ? "\u{1B}[1m\(text)\u{1B}[0m" : text)
                return " " + shown + pad + " "
            }.joined(separator: v) + v
        }
        var out = [rule(tl, tm, tr), line(headerTexts, nil), rule(ml, mm, mr)]
        for (row, raw) in zip(texts, table.rows) { out.append(line(row, raw)) }
        out.append(rule(bl, bm, br))
        return Rendered(text: out.joined(separator: "\n"), omittedColumns: omitted)
    }

    private func markdown(_ table: ResultTable) -> Rendered {
        let (headerTexts, texts, _, omitted) = fitted(table) { Renderer.printable($0).replacingOccurrences(of: "|", with: "\\|") }
        var out = ["| " + headerTexts.joined(separator: " | ") + " |"]
        out.append("|" + headerTexts.map { _ in "---|" }.joined())
        for row in texts { out.append("| " + row.joined(separator: " | ") + " |") }
        return Rendered(text: out.joined(separator: "\n"), omittedColumns: omitted)
    }

    private func lines(_ table: ResultTable) -> String {
        let width = table.headers.map(Renderer.displayWidth).max() ?? 0
        let valueWidth = maxWidth.map { max(Renderer.minimumColumnWidth, $0 - width - 3) }
        return table.rows.map { row in
            zip(table.headers, row).map { header, cell in
                var text = Renderer.printable(cell.display)
                if let valueWidth { text = Renderer.cut(text, to: valueWidth) }
                return String(repeating: " ", count: width - Renderer.displayWidth(header)) + header + " = " + styled(cell, text)
            }.joined(separator: "\n")
        }.joined(separator: "\n\n")
    }

    private func csv(_ table: ResultTable) -> String {
        func field(_ s: String) -> String {
            s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
                ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s
        }
        var out: [String] = []
        if headers { out.append(table.headers.map(field).joined(separator: ",")) }
        for row in table.rows {
            out.append(row.map { $0 == .null ? field(nullValue) : field($0.text(.csv)) }.joined(separator: ","))
        }
        return out.joined(separator: "\r\n")
    }

    private func json(_ table: ResultTable) -> String {
        if table.rows.isEmpty { return "[]" }
        let objects = table.rows.map { row in
            "{" + zip(table.headers, row).map { Cell.jsonString($0) + ":" + $1.json }.joined(separator: ",") + "}"
        }
        return "[" + objects.joined(separator: ",\n") + "]"
    }
}
