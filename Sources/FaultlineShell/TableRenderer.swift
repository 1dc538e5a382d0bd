import Foundation

/// Renders rows of text as a table, as CSV, or as JSON.
enum TableRenderer {
    /// An ASCII table with a header and a line per row.
    static func table(headers: [String], rows: [[String]]) -> String {
        var widths = headers.map { displayWidth($0) }
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count {
                widths[i] = max(widths[i], displayWidth(cell))
            }
        }
        let rule = "+" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "+") + "+"
        func line(_ cells: [String]) -> String {
            "|" + cells.enumerated().map { i, cell in " " + cell + String(repeating: " ", count: max(0, widths[i] - displayWidth(cell))) + " " }.joined(separator: "|") + "|"
        }
        var out = [rule, line(headers), rule]
        for row in rows { out.append(line(row)) }
        out.append(rule)
        return out.joined(separator: "\n")
    }

    /// The number of terminal columns a string takes (one per character here).
    static func displayWidth(_ s: String) -> Int { s.count }
}
