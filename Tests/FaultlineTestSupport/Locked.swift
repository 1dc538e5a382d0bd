import Foundation

/// A value shared between threads, behind a lock.
public final class Locked<Value>: @unchecked Sendable {  // `stored` is only touched under `lock`
    private let lock = NSLock()
    private var stored: Value

    /// A locked box holding `value`.
    public init(_ value: Value) { stored = value }

    /// The current value.
    public var value: Value {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    /// Replaces the value.
    public func set(_ value: Value) { update { $0 = value } }

    /// Changes the value in place, under the lock.
    public func update(_ body: (inout Value) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        body(&stored)
    }
}
