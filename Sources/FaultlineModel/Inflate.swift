import CFaultlineZlib
import Foundation

/// Raw DEFLATE (RFC 1951, no zlib header) decompression, as used by `Z_MODELCACHE`.
enum Inflate {
    struct Failure: Error {
        let message: String
    }

    /// Inflates raw deflate data; `limit` bounds the output size so a hostile stream cannot
    /// exhaust memory.
    static func raw(_ input: Data, limit: Int = 512 << 20) throws -> Data {
        guard !input.isEmpty else { throw Failure(message: "empty compressed data") }
        var stream = z_stream()
        guard faultline_inflateInit2(&stream, -15) == Z_OK else { throw Failure(message: "zlib initialisation failed") }
        defer { inflateEnd(&stream) }
        var output = Data()
        let chunk = 64 * 1024
        var buffer = [UInt8](repeating: 0, count: chunk)
        var input = [UInt8](input)
        let inputCount = input.count
        var status: Int32 = Z_OK
        try input.withUnsafeMutableBufferPointer { inBuf in
            stream.next_in = inBuf.baseAddress
            stream.avail_in = uInt(inputCount)
            repeat {
                let produced: Int = buffer.withUnsafeMutableBufferPointer { outBuf in
                    stream.next_out = outBuf.baseAddress
                    stream.avail_out = uInt(chunk)
                    status = inflate(&stream, Z_NO_FLUSH)
                    return chunk - Int(stream.avail_out)
                }
                guard status == Z_OK || status == Z_STREAM_END else {
                    throw Failure(message: "corrupt compressed data (zlib error \(status))")
                }
                output.append(contentsOf: buffer[0..<produced])
                guard output.count <= limit else { throw Failure(message: "decompressed data too large") }
                if status == Z_OK && produced == 0 && stream.avail_in == 0 {
                    throw Failure(message: "compressed data is truncated")
                }
            } while status != Z_STREAM_END
        }
        return output
    }
}
