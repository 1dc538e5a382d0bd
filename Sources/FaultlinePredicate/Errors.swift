import Foundation

/// A format string that could not be parsed, with the position of the problem.
///
/// ```swift
/// do { _ = try FLPredicate(format: "name ==") }
/// catch let error as PredicateSyntaxError {
///     print(error)            // Unable to parse the format string "name ==": expected an expression at column 8
///     print(error.caretDiagnostic)
///     // name ==
///     //        ^
/// }
/// ```
public struct PredicateSyntaxError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The whole format string.
    public var formatString: String
    /// What went wrong, e.g. `expected an expression`.
    public var message: String
    /// The 1-based column (in characters) where the problem was found; one past the end
    /// for "unexpected end of input" problems.
    public var column: Int

    /// Creates an error.
    public init(formatString: String, message: String, column: Int) {
        self.formatString = formatString
        self.message = message
        self.column = column
    }

    /// `Unable to parse the format string "<input>": <message> at column <n>`.
    public var description: String {
        "Unable to parse the format string \"\(formatString)\": \(message) at column \(column)"
    }

    public var errorDescription: String? { description }

    /// The input on one line with a caret under ``column``.
    ///
    /// Newlines and tabs in the input are shown as spaces so the caret lines up.
    public var caretDiagnostic: String {
        let line = String(formatString.map { $0 == "\n" || $0 == "\t" || $0 == "\r" ? " " : $0 })
        return line + "\n" + String(repeating: " ", count: max(0, column - 1)) + "^"
    }
}

/// A failure while evaluating a predicate or expression in memory (unknown function,
/// incompatible types, unbound variable, a key path that cannot be followed…).
public struct PredicateEvaluationError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// What went wrong.
    public var message: String
    /// The canonical text of the expression or predicate involved, when known.
    public var context: String?

    /// Creates an error.
    public init(_ message: String, context: String? = nil) {
        self.message = message
        self.context = context
    }

    public var description: String {
        if let context { return "\(message) (in \(context))" }
        return message
    }

    public var errorDescription: String? { description }
}
