// Fuzzes the Xcode model loader: the input is the `contents` XML of an `.xcdatamodel`.
// A model that loads is also mapped onto tables and its version hashes are computed.
// Inputs that are not UTF-8 are passed over unless FUZZ_KNOWN_DEFECTS=1 (see below).
import Faultline
import Foundation
@_spi(Fuzzing) import FaultlineModel
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzXMLModel(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = FuzzSupport.data(start, count)
    // Known defect: FoundationXML's parser traps on a name that is not valid UTF-8. Until
    // the loader checks, pass over such inputs (-1: libFuzzer keeps none of them).
    if !FuzzSupport.includesKnownDefects && String(data: data, encoding: .utf8) == nil { return -1 }
    guard let model = try? ManagedObjectModel.loadingXMLContents(data) else { return 0 }
    _ = model.entityVersionHashesByName
    _ = SchemaMapping(model: model).createStatements()
    return 0
}

@main
enum Main {
    static func main() { FuzzSupport.runFuzzer(fuzzXMLModel) }
}
