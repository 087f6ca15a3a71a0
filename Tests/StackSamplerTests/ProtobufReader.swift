/// Decodes protocol buffer wire format into fields, to check what the exporters encode.
struct ProtobufReader {
    /// One field: its number and either a varint or length-delimited bytes.
    enum Value: Equatable {
        case varint(UInt64)
        case bytes([UInt8])
    }

    struct DecodeError: Error, CustomStringConvertible {
        var description: String
    }

    /// The fields of `bytes`, in order; packed repeated fields stay as bytes (see `varints`).
    static func fields(_ bytes: [UInt8]) throws -> [(field: Int, value: Value)] {
        var result: [(Int, Value)] = []
        var position = 0
        while position < bytes.count {
            let key = try varint(bytes, &position)
            let field = Int(key >> 3)
            switch key & 7 {
            case 0: result.append((field, .varint(try varint(bytes, &position))))
            case 2:
                let length = Int(try varint(bytes, &position))
                guard position + length <= bytes.count else { throw DecodeError(description: "field \(field) overruns the message") }
                result.append((field, .bytes(Array(bytes[position..<position + length]))))
                position += length
            default: throw DecodeError(description: "unexpected wire type \(key & 7) for field \(field)")
            }
        }
        return result
    }

    /// The varints of a packed repeated field.
    static func varints(_ bytes: [UInt8]) throws -> [UInt64] {
        var values: [UInt64] = []
        var position = 0
        while position < bytes.count { values.append(try varint(bytes, &position)) }
        return values
    }

    private static func varint(_ bytes: [UInt8], _ position: inout Int) throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 { return value }
            shift += 7
            guard shift < 64 else { break }
        }
        throw DecodeError(description: "truncated or overlong varint")
    }
}
