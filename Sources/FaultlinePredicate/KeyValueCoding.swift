import Foundation

/// Key-value access for in-memory evaluation, standing in for Foundation's KVC (absent on Linux).
///
/// Conform model objects so predicates and sort descriptors can read their properties.
/// The Core Data layer makes managed objects conform and fires faults inside
/// `value(forKey:)`; a thrown error aborts the evaluation and is rethrown to the caller.
///
/// ```swift
/// struct Person: KeyValueCoding {
///     var name: String; var age: Int
///     func value(forKey key: String) -> Any? {
///         switch key { case "name": name; case "age": age; default: nil }
///     }
/// }
/// try FLPredicate(format: "age > 30").evaluate(with: Person(name: "Ann", age: 41)) // true
/// ```
///
/// Values that do not conform are still reachable: `[String: Any]` and `NSDictionary` look
/// keys up (a missing key is `nil`), collections map the key over their elements (like
/// `NSArray.value(forKey:)`), strings answer `length`, and any other value is searched by
/// reflection (`Mirror`) for a stored property with that name.
public protocol KeyValueCoding {
    /// The value of the property named `key`, or `nil`.
    func value(forKey key: String) throws -> Any?
}

/// A receiver for `FUNCTION(receiver, 'selector:', args…)` during in-memory evaluation.
///
/// ```swift
/// struct Calc: FLCustomFunctionReceiver {
///     func perform(selector: String, arguments: [Any?]) throws -> Any? {
///         selector == "double:" ? (arguments.first as? Int).map { $0 * 2 } : nil
///     }
/// }
/// ```
public protocol FLCustomFunctionReceiver {
    /// Performs `selector` with the evaluated `arguments`.
    func perform(selector: String, arguments: [Any?]) throws -> Any?
}
