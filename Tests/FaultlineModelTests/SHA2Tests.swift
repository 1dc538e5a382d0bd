import Foundation
import Testing

@testable import FaultlineModel

/// Known-answer tests from FIPS 180-4 examples (and Python's hashlib for the longer inputs).
@Suite struct SHA2Tests {
    static func hex(_ d: Data) -> String { d.map { String(format: "%02x", $0) }.joined() }

    static let vectors: [(input: [UInt8], sha256: String, sha512: String)] = [
        (Array("".utf8),
         "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
         "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"),
        (Array("abc".utf8),
         "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
         "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"),
        (Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8),
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
         "204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c33596fd15c13b1b07f9aa1d3bea57789ca031ad85c7a71dd70354ec631238ca3445"),
        (Array("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu".utf8),
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
         "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"),
        ([UInt8](repeating: 0x61, count: 1000),
         "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3",
         "67ba5535a46e3f86dbfbed8cbbaf0125c76ed549ff8b0b9e03e0c88cf90fa634fa7b12b47d77b694de488ace8d9a65967dc96df599727d3292a8d9d447709c97"),
        (Array((0..<768).map { UInt8(truncatingIfNeeded: $0) }),
         "f3a25aa93aa2fbba28d79260535bbd6a5eb0fc1c24a8b0f04e12b484c1dfe363",
         "f1721f49518ee462a3d81def26d81037cd474b4254b85ad7c8f1509594d0177bbb996ee9625813852bacac108c2a72c83a8587050fec1dcda64730d6470953e6"),
    ]

    @Test func sha256KnownAnswers() {
        for v in Self.vectors {
            #expect(Self.hex(SHA256Hasher.hash(v.input)) == v.sha256, "length \(v.input.count)")
        }
    }

    @Test func sha512KnownAnswers() {
        for v in Self.vectors {
            #expect(Self.hex(SHA512Hasher.hash(v.input)) == v.sha512, "length \(v.input.count)")
        }
    }

    @Test func incrementalUpdatesEqualOneShot() {
        let input = Array((0..<777).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        for split in [0, 1, 55, 56, 63, 64, 65, 111, 112, 128, 500, 777] {
            var a = SHA256Hasher()
            a.update(input[..<split])
            a.update(input[split...])
            #expect(a.finalize() == SHA256Hasher.hash(input))
            var b = SHA512Hasher()
            b.update(input[..<split])
            b.update(input[split...])
            #expect(b.finalize() == SHA512Hasher.hash(input))
            // A non-contiguous sequence takes the byte-at-a-time path.
            var c = SHA256Hasher()
            c.update(input[..<split].lazy.map { $0 })
            c.update(Data(input[split...]))
            #expect(c.finalize() == SHA256Hasher.hash(input))
            var d = SHA512Hasher()
            d.update(input[..<split].lazy.map { $0 })
            d.update(Data(input[split...]))
            #expect(d.finalize() == SHA512Hasher.hash(input))
        }
    }

    @Test func oneMegabyteIsHashedQuickly() {
        let input = Data(repeating: 0x61, count: 1 << 20)
        let clock = ContinuousClock()
        let elapsed = clock.measure { _ = SHA256Hasher.hash(input) }
        #expect(Self.hex(SHA256Hasher.hash(input)) == "9bc1b2a288b26af7257a36277ae3816a7d4f16e89c1e7e77d0a5c48bad62b360")
        #expect(elapsed < .seconds(5), "\(elapsed)")
    }
}
