import Faultline
import FaultlineModel
import FaultlineSQL
import FaultlineTestSupport
import Foundation

/// Copies of the corpus stores: every test opens a copy (with its `-wal` and `-shm`) in a
/// fresh temporary folder, never the original.
enum CorpusStoreCopies {
    /// Every `*.sqlite` under `corpus/stores`, as `folder/name`.
    static func relativePaths(corpus: URL) throws -> [String] { try Corpus.storePaths(corpus) }

    /// Copies a store and its `-wal`/`-shm` into a new temporary folder; returns the copy's URL.
    static func copy(_ relativePath: String, corpus: URL) throws -> URL { try Corpus.copyStore(relativePath, from: corpus) }

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
