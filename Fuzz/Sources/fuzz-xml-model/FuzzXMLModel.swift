// Fuzzes the Xcode model loader: the input is the `contents` XML of an `.xcdatamodel`.
// A model that loads is also mapped onto tables and its version hashes are computed.
import Faultline
import Foundation
@_spi(Fuzzing) import FaultlineModel
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzXMLModel(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = FuzzSupport.data(start, count)
    guard let model = try? ManagedObjectModel.loadingXMLContents(data) else { return 0 }
    _ = model.entityVersionHashesByName
    _ = SchemaMapping(model: model).createStatements()
    return 0
}

@main
enum Main {
    static func main() { FuzzSupport.runFuzzer(fuzzXMLModel) }
}
