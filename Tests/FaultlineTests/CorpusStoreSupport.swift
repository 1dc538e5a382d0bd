import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation

/// Copies of the corpus stores: every test opens a copy (with its `-wal` and `-shm`) in a
/// fresh temporary folder, never the original.
enum CorpusStoreCopies {
    /// Every `*.sqlite` under `corpus/stores`, as `folder/name`.
    static func relativePaths(corpus: URL) throws -> [String] {
        let stores = corpus.appendingPathComponent("stores")
        var paths: [String] = []
        for folder in try FileManager.default.contentsOfDirectory(atPath: stores.path).sorted() {
            let dir = stores.appendingPathComponent(folder)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [] where name.hasSuffix(".sqlite") {
                paths.append("\(folder)/\(name)")
            }
        }
        return paths.sorted()
    }

    /// Copies a store and its `-wal`/`-shm` into a new temporary folder; returns the copy's URL.
    static func copy(_ relativePath: String, corpus: URL) throws -> URL {
        let source = corpus.appendingPathComponent("stores").appendingPathComponent(relativePath)
        let folder = try TestSupport.temporaryDirectory("faultline-corpus-store")
        let copy = folder.appendingPathComponent(source.lastPathComponent)
        for suffix in ["", "-wal", "-shm"] {
            let from = URL(fileURLWithPath: source.path + suffix)
            guard FileManager.default.fileExists(atPath: from.path) else { continue }
            let to = URL(fileURLWithPath: copy.path + suffix)
            try FileManager.default.copyItem(at: from, to: to)
            // The corpus is read-only on disk; the copy must be writable like a real store.
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: to.path)
        }
        return copy
    }

    /// `CREATE` statements of a database, by object name (no `sqlite_autoindex_…`), read from a
    /// private copy so the store given is not touched.
    static func schemaSQL(of store: URL) throws -> [(type: String, name: String, sql: String)] {
        let folder = try TestSupport.temporaryDirectory("faultline-schema-read")
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent(store.lastPathComponent)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: store.path + suffix) {
            try FileManager.default.copyItem(atPath: store.path + suffix, toPath: copy.path + suffix)
        }
        let connection = try Connection(path: copy.path, mode: .readOnly)
        return try connection.query("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL").map {
            (type: $0[0].string ?? "", name: $0[1].string ?? "", sql: $0[2].string ?? "")
        }
    }
}
