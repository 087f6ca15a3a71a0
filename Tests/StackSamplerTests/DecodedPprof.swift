@testable import StackSampler
import TestSupport

/// A pprof file read back: gunzipped with zlib, decoded with `ProtobufReader`, strings resolved.
struct DecodedPprof {
    struct Sample {
        var locationIDs: [UInt64]
        var values: [Int64]
        var stringLabels: [String: String] = [:]
        var numberLabels: [String: Int64] = [:]
    }
    struct Location {
        var mappingID: UInt64 = 0
        var address: UInt64 = 0
        /// The location's lines, innermost first: their functions and line numbers (0 when unknown).
        var functionIDs: [UInt64] = []
        var lineNumbers: [UInt64] = []
    }
    struct Mapping {
        var start: UInt64 = 0, limit: UInt64 = 0
        var filename = "", buildID = ""
        var hasFunctions = false
    }

    var sampleTypes: [(type: String, unit: String)] = []
    var samples: [Sample] = []
    var locations: [UInt64: Location] = [:]
    var functionNames: [UInt64: String] = [:]
    var functionFiles: [UInt64: String] = [:]
    var mappings: [UInt64: Mapping] = [:]
    var periodType: (type: String, unit: String)?
    var period: Int64 = 0
    var comments: [String] = []

    /// Decodes gzip-compressed `bytes`.
    init(gzipped bytes: [UInt8]) throws {
        let fields = try ProtobufReader.fields(try gunzip(bytes))
        let strings = fields.filter { $0.field == 6 }.map { field -> String in
            guard case .bytes(let bytes) = field.value else { return "?" }
            return String(decoding: bytes, as: UTF8.self)
        }
        func string(_ value: UInt64) -> String { Int(value) < strings.count ? strings[Int(value)] : "<bad index \(value)>" }
        func submessage(_ value: ProtobufReader.Value) throws -> [Int: [ProtobufReader.Value]] {
            guard case .bytes(let bytes) = value else { return [:] }
            return Dictionary(grouping: try ProtobufReader.fields(bytes), by: \.field).mapValues { $0.map(\.value) }
        }
        func number(_ values: [ProtobufReader.Value]?) -> UInt64 {
            if case .varint(let value) = values?.first { return value }
            return 0
        }
        func packed(_ values: [ProtobufReader.Value]?) throws -> [UInt64] {
            try (values ?? []).flatMap { value -> [UInt64] in
                switch value {
                case .varint(let single): [single]
                case .bytes(let bytes): try ProtobufReader.varints(bytes)
                }
            }
        }
        for (field, value) in fields {
            switch field {
            case 1, 11:
                let type = try submessage(value)
                let pair = (string(number(type[1])), string(number(type[2])))
                if field == 1 { sampleTypes.append(pair) } else { periodType = pair }
            case 2:
                let sample = try submessage(value)
                var decoded = Sample(locationIDs: try packed(sample[1]), values: try packed(sample[2]).map { Int64(bitPattern: $0) })
                for label in sample[3] ?? [] {
                    let parts = try submessage(label)
                    let key = string(number(parts[1]))
                    if parts[2] != nil { decoded.stringLabels[key] = string(number(parts[2])) }
                    if parts[3] != nil { decoded.numberLabels[key] = Int64(bitPattern: number(parts[3])) }
                }
                samples.append(decoded)
            case 3:
                let mapping = try submessage(value)
                mappings[number(mapping[1])] = Mapping(start: number(mapping[2]), limit: number(mapping[3]),
                                                       filename: string(number(mapping[5])), buildID: string(number(mapping[6])),
                                                       hasFunctions: number(mapping[7]) == 1)
            case 4:
                let location = try submessage(value)
                let lines = try (location[4] ?? []).map { try submessage($0) }
                locations[number(location[1])] = Location(mappingID: number(location[2]), address: number(location[3]),
                                                          functionIDs: lines.map { number($0[1]) }, lineNumbers: lines.map { number($0[2]) })
            case 5:
                let function = try submessage(value)
                functionNames[number(function[1])] = string(number(function[2]))
                functionFiles[number(function[1])] = string(number(function[4]))
            case 12: period = Int64(bitPattern: number([value]))
            case 13: comments += try packed([value]).map(string)
            default: break
            }
        }
    }

    /// The samples as `root;…;leaf` lines (function names) with summed first values.
    func foldedStacks(threadRoots: Bool = false) -> [String: Int64] {
        var lines: [String: Int64] = [:]
        for sample in samples {
            var names = sample.locationIDs.reversed().flatMap { id in
                (locations[id]?.functionIDs ?? []).reversed().map { functionNames[$0] ?? "<no function \($0)>" }
            }
            if threadRoots, let name = sample.stringLabels["thread_name"], let tid = sample.numberLabels["thread_id"] {
                names.insert("[\(name) tid=\(tid)]", at: 0)
            }
            lines[names.joined(separator: ";"), default: 0] += sample.values.first ?? 0
        }
        return lines
    }
}
