import Foundation

/// Turns archived `NSPredicate` / `NSExpression` objects (inside compiled models and model
/// caches) back into NSPredicate format text, using the public class and key names of
/// Apple's archives (`NSComparisonPredicate`, `NSLeftExpression`, `NSOperatorType`, …).
///
/// Unknown shapes render as a descriptive placeholder rather than failing: the text is kept
/// for display and re-parsing, and nothing else depends on it.
struct ArchivedPredicateDecoder {
    let archive: KeyedArchive

    init(archive: KeyedArchive) {
        self.archive = archive
    }

    /// The format text of an archived predicate, or nil when the reference is `$null`.
    func predicate(_ ref: PropertyListValue?) -> String? {
        guard let object = archive.object(ref) else { return nil }
        return predicateText(object, depth: 0)
    }

    /// The format text of an archived expression, or nil when the reference is `$null`.
    func expression(_ ref: PropertyListValue?) -> String? {
        guard let object = archive.object(ref) else { return nil }
        return expressionText(object, depth: 0)
    }

    private func predicateText(_ o: KeyedArchive.Object, depth: Int) -> String {
        guard depth < 64 else { return "<too deep>" }
        switch o.className {
        case "NSTruePredicate": return "TRUEPREDICATE"
        case "NSFalsePredicate": return "FALSEPREDICATE"
        case "NSCompoundPredicate":
            let type = archive.int(o["NSCompoundPredicateType"]) ?? 1
            let subs = (archive.array(o["NSSubpredicates"]) ?? []).compactMap { archive.object($0) }
            let texts = subs.map { sub -> String in
                let t = predicateText(sub, depth: depth + 1)
                return sub.className == "NSCompoundPredicate" ? "(\(t))" : t
            }
            switch type {
            case 0: return "NOT " + (texts.first ?? "TRUEPREDICATE")
            case 2: return texts.isEmpty ? "FALSEPREDICATE" : texts.joined(separator: " OR ")
            default: return texts.isEmpty ? "TRUEPREDICATE" : texts.joined(separator: " AND ")
            }
        case "NSComparisonPredicate":
            let left = archive.object(o["NSLeftExpression"]).map { expressionText($0, depth: depth + 1) } ?? "nil"
            let right = archive.object(o["NSRightExpression"]).map { expressionText($0, depth: depth + 1) } ?? "nil"
            guard let op = archive.object(o["NSPredicateOperator"]) else { return "\(left) == \(right)" }
            let type = archive.int(op["NSOperatorType"]) ?? 4
            let modifier = archive.int(op["NSModifier"]) ?? 0
            let options = archive.int(op["NSOptions"]) ?? archive.int(op["NSFlags"]) ?? 0
            var symbol: String
            switch type {
            case 0: symbol = "<"
            case 1: symbol = "<="
            case 2: symbol = ">"
            case 3: symbol = ">="
            case 4: symbol = "=="
            case 5: symbol = "!="
            case 6: symbol = "MATCHES"
            case 7: symbol = "LIKE"
            case 8: symbol = "BEGINSWITH"
            case 9: symbol = "ENDSWITH"
            case 10: symbol = "IN"
            case 11: symbol = archive.string(op["NSSelectorName"]) ?? "CUSTOM"
            case 99: symbol = "CONTAINS"
            case 100: symbol = "BETWEEN"
            default: symbol = "<operator \(type)>"
            }
            var flags = ""
            if options & 1 != 0 { flags += "c" }
            if options & 2 != 0 { flags += "d" }
            if options & 8 != 0 { flags += "n" }
            if !flags.isEmpty { symbol += "[\(flags)]" }
            let prefix = modifier == 1 ? "ANY " : modifier == 2 ? "ALL " : ""
            return "\(prefix)\(left) \(symbol) \(right)"
        default:
            return "<\(o.className)>"
        }
    }

    private func expressionText(_ o: KeyedArchive.Object, depth: Int) -> String {
        guard depth < 64 else { return "<too deep>" }
        switch o.className {
        case "NSSelfExpression":
            return "SELF"
        case "NSVariableExpression":
            return "$" + (archive.string(o["NSVariable"]) ?? "")
        case "NSKeyPathSpecifierExpression":
            return archive.string(o["NSKeyPath"]) ?? ""
        case "NSConstantValueExpression":
            return constantText(o["NSConstantValue"], depth: depth)
        case "NSAggregateExpression":
            let items = (archive.array(o["NSCollection"]) ?? []).compactMap { archive.object($0) }.map { expressionText($0, depth: depth + 1) }
            return "{" + items.joined(separator: ", ") + "}"
        case "NSFetchRequestExpression":
            // `FETCH(request, context, countOnly)` (mapping models' source expressions). The
            // keys are Faultline's reading (see Migration.md, "Mapping models"): no compiled
            // mapping model with one was available to check them against.
            let request = archive.object(o["NSRequest"] ?? o["NSFetchRequest"]).map { expressionText($0, depth: depth + 1) } ?? "nil"
            let context = archive.object(o["NSContext"] ?? o["NSManagedObjectContext"]).map { expressionText($0, depth: depth + 1) } ?? "nil"
            let countOnly = archive.bool(o["NSIsCountOnly"] ?? o["NSCountOnly"]) ?? false
            return "FETCH(\(request), \(context), \(countOnly ? "YES" : "NO"))"
        case "NSKeyPathExpression", "NSFunctionExpression":
            let selector = archive.string(o["NSSelectorName"]) ?? ""
            let operand = archive.object(o["NSOperand"])
            let arguments = (archive.array(o["NSArguments"]) ?? []).compactMap { archive.object($0) }
            if selector == "valueForKey:" || selector == "valueForKeyPath:", let key = arguments.first {
                let keyText = expressionText(key, depth: depth + 1)
                if let operand, operand.className != "NSSelfExpression" {
                    return expressionText(operand, depth: depth + 1) + "." + keyText
                }
                return keyText
            }
            let args = arguments.map { expressionText($0, depth: depth + 1) }.joined(separator: ", ")
            if let operand, operand.className != "NSConstantValueExpression" || archive.string(operand["NSConstantValue"]) != "NSPredicateUtilities" {
                return "FUNCTION(\(expressionText(operand, depth: depth + 1)), \"\(selector)\"\(args.isEmpty ? "" : ", " + args))"
            }
            return "\(selector)(\(args))"
        default:
            if let kp = archive.string(o["NSKeyPath"]) { return kp }
            return "<\(o.className)>"
        }
    }

    private func constantText(_ ref: PropertyListValue?, depth: Int) -> String {
        guard let value = archive.resolve(ref) else { return "nil" }
        switch value {
        case .string(let s): return quote(s)
        case .integer(let i): return String(i)
        case .real(let d): return formatNumber(d)
        case .bool(let b): return b ? "YES" : "NO"
        case .dictionary(let dict):
            if let s = archive.string(value) { return quote(s) }
            if let t = dict["NS.time"], case .real(let seconds) = t {
                return "CAST(\(formatNumber(seconds)), \"NSDate\")"
            }
            if let items = archive.array(value) {
                return "{" + items.map { constantText($0, depth: depth + 1) }.joined(separator: ", ") + "}"
            }
            if let n = archive.className(of: ref) { return "<\(n)>" }
            return "nil"
        default:
            return "nil"
        }
    }

    private func quote(_ s: String) -> String {
        "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
