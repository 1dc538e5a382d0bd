import Foundation

/// SHA-256 and SHA-512 (FIPS 180-4), written here so the model module needs nothing but
/// Foundation. Core Data's version hashes are SHA-256 digests; the store metadata's
/// `NSStoreModelVersionHashesDigest` is a SHA-512 digest.
///
/// ```swift
/// var hasher = SHA256Hasher()
/// hasher.update("abc".utf8)
/// let digest: Data = hasher.finalize()   // ba7816bf…
/// ```
package struct SHA256Hasher: Sendable {
    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    private var state: [UInt32] = [
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
    ]
    private var buffer: [UInt8] = []
    private var length: UInt64 = 0

    /// Creates a hasher with an empty input.
    package init() {
        buffer.reserveCapacity(64)
    }

    /// The SHA-256 digest (32 bytes) of `bytes`.
    package static func hash(_ bytes: some Sequence<UInt8>) -> Data {
        var h = SHA256Hasher()
        h.update(bytes)
        return h.finalize()
    }

    /// Appends bytes to the input.
    package mutating func update(_ bytes: some Sequence<UInt8>) {
        let handled: Bool? = bytes.withContiguousStorageIfAvailable { input in
            updateContiguous(input)
            return true
        }
        if handled == true { return }
        for byte in bytes {
            buffer.append(byte)
            length &+= 1
            if buffer.count == 64 {
                compress(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Whole blocks are compressed straight from the input; only a partial block is buffered.
    private mutating func updateContiguous(_ input: UnsafeBufferPointer<UInt8>) {
        length &+= UInt64(input.count)
        var i = 0
        if !buffer.isEmpty {
            let take = min(64 - buffer.count, input.count)
            buffer.append(contentsOf: input[0..<take])
            i = take
            if buffer.count == 64 {
                compress(buffer[0..<64])
                buffer.removeAll(keepingCapacity: true)
            }
        }
        while input.count - i >= 64 {
            compress(ArraySlice(input[i..<i + 64]))
            i += 64
        }
        if i < input.count { buffer.append(contentsOf: input[i...]) }
    }

    /// Pads the input and returns the 32-byte digest.
    package consuming func finalize() -> Data {
        let bitLength = length &* 8
        var tail = buffer
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        var offset = 0
        while offset < tail.count {
            compress(tail[offset..<offset + 64])
            offset += 64
        }
        var out = Data(capacity: 32)
        for word in state {
            out.append(UInt8(truncatingIfNeeded: word >> 24))
            out.append(UInt8(truncatingIfNeeded: word >> 16))
            out.append(UInt8(truncatingIfNeeded: word >> 8))
            out.append(UInt8(truncatingIfNeeded: word))
        }
        return out
    }

    @inline(__always) private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }

    private mutating func compress(_ block: ArraySlice<UInt8>) {
        var w = [UInt32](repeating: 0, count: 64)
        let base = block.startIndex
        for i in 0..<16 {
            let j = base + i * 4
            w[i] = UInt32(block[j]) << 24 | UInt32(block[j + 1]) << 16 | UInt32(block[j + 2]) << 8 | UInt32(block[j + 3])
        }
        for i in 16..<64 {
            let s0 = Self.rotr(w[i - 15], 7) ^ Self.rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
            let s1 = Self.rotr(w[i - 2], 17) ^ Self.rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var a = state[0], b = state[1], c = state[2], d = state[3]
        var e = state[4], f = state[5], g = state[6], h = state[7]
        for i in 0..<64 {
            let s1 = Self.rotr(e, 6) ^ Self.rotr(e, 11) ^ Self.rotr(e, 25)
            let ch = (e & f) ^ (~e & g)
            let t1 = h &+ s1 &+ ch &+ Self.k[i] &+ w[i]
            let s0 = Self.rotr(a, 2) ^ Self.rotr(a, 13) ^ Self.rotr(a, 22)
            let maj = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ maj
            h = g; g = f; f = e; e = d &+ t1
            d = c; c = b; b = a; a = t1 &+ t2
        }
        state[0] &+= a; state[1] &+= b; state[2] &+= c; state[3] &+= d
        state[4] &+= e; state[5] &+= f; state[6] &+= g; state[7] &+= h
    }

    private mutating func compress(_ block: [UInt8]) {
        compress(block[0..<64])
    }
}

/// SHA-512 (FIPS 180-4); see ``SHA256Hasher``.
package struct SHA512Hasher: Sendable {
    private static let k: [UInt64] = [
        0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f, 0xe9b5dba58189dbbc, 0x3956c25bf348b538,
        0x59f111f1b605d019, 0x923f82a4af194f9b, 0xab1c5ed5da6d8118, 0xd807aa98a3030242, 0x12835b0145706fbe,
        0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2, 0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235,
        0xc19bf174cf692694, 0xe49b69c19ef14ad2, 0xefbe4786384f25e3, 0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65,
        0x2de92c6f592b0275, 0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5, 0x983e5152ee66dfab,
        0xa831c66d2db43210, 0xb00327c898fb213f, 0xbf597fc7beef0ee4, 0xc6e00bf33da88fc2, 0xd5a79147930aa725,
        0x06ca6351e003826f, 0x142929670a0e6e70, 0x27b70a8546d22ffc, 0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed,
        0x53380d139d95b3df, 0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6, 0x92722c851482353b,
        0xa2bfe8a14cf10364, 0xa81a664bbc423001, 0xc24b8b70d0f89791, 0xc76c51a30654be30, 0xd192e819d6ef5218,
        0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8, 0x19a4c116b8d2d0c8, 0x1e376c085141ab53,
        0x2748774cdf8eeb99, 0x34b0bcb5e19b48a8, 0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb, 0x5b9cca4f7763e373,
        0x682e6ff3d6b2b8a3, 0x748f82ee5defb2fc, 0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
        0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915, 0xc67178f2e372532b, 0xca273eceea26619c,
        0xd186b8c721c0c207, 0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178, 0x06f067aa72176fba, 0x0a637dc5a2c898a6,
        0x113f9804bef90dae, 0x1b710b35131c471b, 0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc,
        0x431d67c49c100d4c, 0x4cc5d4becb3e42b6, 0x597f299cfc657e2a, 0x5fcb6fab3ad6faec, 0x6c44198c4a475817,
    ]

    private var state: [UInt64] = [
        0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
        0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179,
    ]
    private var buffer: [UInt8] = []
    private var length: UInt64 = 0

    /// Creates a hasher with an empty input.
    package init() {
        buffer.reserveCapacity(128)
    }

    /// The SHA-512 digest (64 bytes) of `bytes`.
    package static func hash(_ bytes: some Sequence<UInt8>) -> Data {
        var h = SHA512Hasher()
        h.update(bytes)
        return h.finalize()
    }

    /// Appends bytes to the input.
    package mutating func update(_ bytes: some Sequence<UInt8>) {
        let handled: Bool? = bytes.withContiguousStorageIfAvailable { input in
            updateContiguous(input)
            return true
        }
        if handled == true { return }
        for byte in bytes {
            buffer.append(byte)
            length &+= 1
            if buffer.count == 128 {
                compress(buffer[0..<128])
                buffer.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Whole blocks are compressed straight from the input; only a partial block is buffered.
    private mutating func updateContiguous(_ input: UnsafeBufferPointer<UInt8>) {
        length &+= UInt64(input.count)
        var i = 0
        if !buffer.isEmpty {
            let take = min(128 - buffer.count, input.count)
            buffer.append(contentsOf: input[0..<take])
            i = take
            if buffer.count == 128 {
                compress(buffer[0..<128])
                buffer.removeAll(keepingCapacity: true)
            }
        }
        while input.count - i >= 128 {
            compress(ArraySlice(input[i..<i + 128]))
            i += 128
        }
        if i < input.count { buffer.append(contentsOf: input[i...]) }
    }

    /// Pads the input and returns the 64-byte digest.
    package consuming func finalize() -> Data {
        let bitLength = length &* 8
        var tail = buffer
        tail.append(0x80)
        while tail.count % 128 != 112 { tail.append(0) }
        // The length field is 128 bits; inputs here are far below 2^64 bits.
        tail.append(contentsOf: [UInt8](repeating: 0, count: 8))
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        var offset = 0
        while offset < tail.count {
            compress(tail[offset..<offset + 128])
            offset += 128
        }
        var out = Data(capacity: 64)
        for word in state {
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return out
    }

    @inline(__always) private static func rotr(_ x: UInt64, _ n: UInt64) -> UInt64 { (x >> n) | (x << (64 - n)) }

    private mutating func compress(_ block: ArraySlice<UInt8>) {
        var w = [UInt64](repeating: 0, count: 80)
        let base = block.startIndex
        for i in 0..<16 {
            var v: UInt64 = 0
            for j in 0..<8 { v = v << 8 | UInt64(block[base + i * 8 + j]) }
            w[i] = v
        }
        for i in 16..<80 {
            let s0 = Self.rotr(w[i - 15], 1) ^ Self.rotr(w[i - 15], 8) ^ (w[i - 15] >> 7)
            let s1 = Self.rotr(w[i - 2], 19) ^ Self.rotr(w[i - 2], 61) ^ (w[i - 2] >> 6)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var a = state[0], b = state[1], c = state[2], d = state[3]
        var e = state[4], f = state[5], g = state[6], h = state[7]
        for i in 0..<80 {
            let s1 = Self.rotr(e, 14) ^ Self.rotr(e, 18) ^ Self.rotr(e, 41)
            let ch = (e & f) ^ (~e & g)
            let t1 = h &+ s1 &+ ch &+ Self.k[i] &+ w[i]
            let s0 = Self.rotr(a, 28) ^ Self.rotr(a, 34) ^ Self.rotr(a, 39)
            let maj = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ maj
            h = g; g = f; f = e; e = d &+ t1
            d = c; c = b; b = a; a = t1 &+ t2
        }
        state[0] &+= a; state[1] &+= b; state[2] &+= c; state[3] &+= d
        state[4] &+= e; state[5] &+= f; state[6] &+= g; state[7] &+= h
    }
}
