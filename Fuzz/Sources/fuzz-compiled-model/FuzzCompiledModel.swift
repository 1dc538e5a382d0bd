// Fuzzes the compiled-model path: binary property lists, `NSKeyedArchiver` archives of a
// model (`.mom`) and raw DEFLATE (a store's `Z_MODELCACHE`). The input is either a `.mom`
// (`bplist00…`) or a `Z_MODELCACHE` blob; `ManagedObjectModel(storeModelCacheBlob:)` takes
// both. A model that loads is also mapped onto tables and its version hashes are computed.
import Faultline
@_spi(Fuzzing) import FaultlineModel
import Foundation
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCompiledModel(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = FuzzSupport.data(start, count)
    ManagedObjectModel.parsingBinaryPropertyList(data)
    guard let model = try? ManagedObjectModel(storeModelCacheBlob: data, source: "fuzz") else { return 0 }
    _ = model.entityVersionHashesByName
    _ = SchemaMapping(model: model).createStatements()
    return 0
}

@main
enum Main {
    static func main() { FuzzSupport.runFuzzer(fuzzCompiledModel) }
}
