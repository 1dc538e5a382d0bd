import Foundation

/// One value of a result, typed so each output mode can write it properly (JSON numbers stay
/// numbers, nil is `null`, a table shows `nil`).
enum Cell: Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    /// Text, shown as it is.
    case text(String)
    /// A handle (`$3`) or another reference to an object, shown as it is, quoted in JSON.
    case reference(String)

    /// The text a table, line or CSV output shows.
    var display: String {
        switch self {
        case .null: "nil"
        case .bool(let b): b ? "true" : "false"
        case .integer(let i): String(i)
        case .real(let d): Cell.format(d)
        case .text(let s), .reference(let s): s
        }
    }

    /// A double without a needless `.0` (`3`, `2.5`, `1e+20`), as NSNumber prints it.
    static func format(_ d: Double) -> String {
        if d.isFinite, d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        return String(d)
    }

    /// The value as a JSON fragment.
    var json: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .integer(let i): return String(i)
        case .real(let d): return d.isFinite ? Cell.format(d) : "null"
        case .text(let s), .reference(let s): return Cell.jsonString(s)
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
}

/// The output modes of `.mode`, as in the sqlite3 shell.
enum OutputMode: String, CaseIterable {
    case table, box, line, csv, json, markdown, list, tabs, quote, insert, html
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

    func render(_ table: ResultTable) -> String {
        switch mode {
        case .table: return grid(table, box: false)
        case .box: return grid(table, box: true)
        case .markdown: return markdown(table)
        case .line: return lines(table)
        case .csv: return csv(table)
        case .json: return json(table)
        case .list: return separated(table, column: columnSeparator, row: rowSeparator)
        case .tabs: return separated(table, column: "\t", row: "\n")
        case .quote: return quoted(table)
        case .insert: return inserts(table)
        case .html: return html(table)
        }
    }

    /// sqlite3's list and tabs modes: values as they are, nil as `.nullvalue`.
    private func separated(_ table: ResultTable, column: String, row: String) -> String {
        var out: [String] = []
        if headers { out.append(table.headers.joined(separator: column)) }
        for cells in table.rows { out.append(cells.map { $0 == .null ? nullValue : $0.display }.joined(separator: column)) }
        return out.joined(separator: row)
    }

    /// An SQL literal for a value: `NULL`, numbers, `'text'` with quotes doubled.
    static func sqlLiteral(_ cell: Cell) -> String {
        switch cell {
        case .null: return "NULL"
        case .bool(let b): return b ? "1" : "0"
        case .integer(let i): return String(i)
        case .real(let d): return d.isFinite ? "\(d)" : (d > 0 ? "1e999" : d < 0 ? "-1e999" : "NULL")
        case .text(let t), .reference(let t): return "'" + t.replacingOccurrences(of: "'", with: "''") + "'"
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
        for cells in table.rows { out.append("<TR>" + cells.map { "<TD>\(escape($0 == .null ? nullValue : $0.display))</TD>" }.joined() + "\n</TR>") }
        return out.joined(separator: "\n")
    }

    /// Terminal columns a string takes: wide East Asian characters and emoji take two,
    /// combining marks none.
    static func displayWidth(_ s: String) -> Int {
        s.unicodeScalars.reduce(0) { width, scalar in
            let v = scalar.value
            if scalar.properties.generalCategory == .nonspacingMark || scalar.properties.generalCategory == .enclosingMark || v == 0x200D { return width }
            if scalar.properties.isEmojiPresentation { return width + 2 }
            let wide = (0x1100...0x115F).contains(v) || (0x2E80...0xA4CF).contains(v) || (0xAC00...0xD7A3).contains(v)
                || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v) || (0xFF00...0xFF60).contains(v)
                || (0xFFE0...0xFFE6).contains(v) || (0x20000...0x3FFFD).contains(v)
            return width + (wide ? 2 : 1)
        }
    }

    /// Control characters would break a table's lines: show them escaped.
    static func printable(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return s }
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case let c where c.value < 0x20 || c.value == 0x7F: out += String(format: "\\x%02X", c.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private func styled(_ cell: Cell, _ text: String) -> String {
        guard color else { return text }
        switch cell {
        case .null: return "\u{1B}[2m\(text)\u{1B}[0m"
        case .reference: return "\u{1B}[36m\(text)\u{1B}[0m"
        default: return text
        }
    }

    private func grid(_ table: ResultTable, box: Bool) -> String {
        let texts = table.rows.map { $0.map { Renderer.printable($0.display) } }
        var widths = table.headers.map(Renderer.displayWidth)
        for row in texts {
            for (i, text) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], Renderer.displayWidth(text)) }
        }
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
        var out = [rule(tl, tm, tr), line(table.headers, nil), rule(ml, mm, mr)]
        for (row, raw) in zip(texts, table.rows) { out.append(line(row, raw)) }
        out.append(rule(bl, bm, br))
        return out.joined(separator: "\n")
    }

    private func markdown(_ table: ResultTable) -> String {
        func escape(_ s: String) -> String { Renderer.printable(s).replacingOccurrences(of: "|", with: "\\|") }
        var out = ["| " + table.headers.map(escape).joined(separator: " | ") + " |"]
        out.append("|" + table.headers.map { _ in "---|" }.joined())
        for row in table.rows { out.append("| " + row.map { escape($0.display) }.joined(separator: " | ") + " |") }
        return out.joined(separator: "\n")
    }

    private func lines(_ table: ResultTable) -> String {
        let width = table.headers.map(Renderer.displayWidth).max() ?? 0
        return table.rows.map { row in
            zip(table.headers, row).map { header, cell in
                String(repeating: " ", count: width - Renderer.displayWidth(header)) + header + " = " + styled(cell, cell.display)
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
            out.append(row.map { $0 == .null ? field(nullValue) : field($0.display) }.joined(separator: ","))
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
