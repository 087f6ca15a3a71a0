/// pprof: a gzip-compressed `profile.proto` message (github.com/google/pprof, proto/profile.proto)
/// with sample types samples/count and cpu/nanoseconds (wall/nanoseconds in wall mode; samples
/// only when the period is unknown), the period, a mapping per module with its build id, a
/// location per address, a function per name and file, and `thread_id` / `thread_name` labels on
/// each sample. Per-thread roots are labels here, not frames. With source lines, a location's
/// lines are the calls inlined at it, innermost first, then its function, each with its line
/// number, and a function's file is its source file (else the module).
enum PprofRenderer: ProfileRenderer {
    /// Field numbers of profile.proto's messages.
    private enum Field {
        enum Profile {
            static let sampleType = 1, sample = 2, mapping = 3, location = 4, function = 5, stringTable = 6
            static let timeNanos = 9, durationNanos = 10, periodType = 11, period = 12, comment = 13
        }
        enum ValueType { static let type = 1, unit = 2 }
        enum Sample { static let locationID = 1, value = 2, label = 3 }
        enum Label { static let key = 1, string = 2, number = 3 }
        enum Mapping { static let id = 1, start = 2, limit = 3, offset = 4, filename = 5, buildID = 6, hasFunctions = 7 }
        enum Location { static let id = 1, mappingID = 2, address = 3, line = 4 }
        enum Line { static let functionID = 1, line = 2 }
        enum Function { static let id = 1, name = 2, systemName = 3, filename = 4 }
    }

    static func render(_ profile: Profile, options: ExportOptions) -> [UInt8] {
        Gzip.compress(encode(profile))
    }

    /// The uncompressed protobuf message.
    static func encode(_ profile: Profile) -> [UInt8] {
        var tables = ProfileTables(profile)
        var message = ProtobufWriter()
        let period = profile.configuration?.sampleWeight
        let timeType = profile.configuration?.sampleType ?? "cpu", unit = profile.configuration?.sampleUnit ?? "nanoseconds"
        var sampleTypes = [("samples", "count")]
        if period != nil { sampleTypes.append((timeType, unit)) }
        for (type, unit) in sampleTypes {
            let typeIndex = tables.strings.index(type), unitIndex = tables.strings.index(unit)
            message.message(Field.Profile.sampleType) {
                $0.int(Field.ValueType.type, typeIndex)
                $0.int(Field.ValueType.unit, unitIndex)
            }
        }

        let threadIDKey = tables.strings.index("thread_id"), threadNameKey = tables.strings.index("thread_name")
        let threadNames = profile.threads.map { tables.strings.index($0.name) }
        for sample in tables.samples {
            var values = [UInt64(sample.count)]
            if let period { values.append(UInt64(sample.count) * period) }
            message.message(Field.Profile.sample) {
                $0.packed(Field.Sample.locationID, sample.locations.map { UInt64($0 + 1) })
                $0.packed(Field.Sample.value, values)
                guard profile.threads.indices.contains(sample.thread) else { return }
                let thread = profile.threads[sample.thread]
                $0.message(Field.Sample.label) {
                    $0.int(Field.Label.key, threadIDKey)
                    $0.int(Field.Label.number, Int64(thread.id))
                }
                $0.message(Field.Sample.label) {
                    $0.int(Field.Label.key, threadNameKey)
                    $0.int(Field.Label.string, threadNames[sample.thread])
                }
            }
        }
        for (index, location) in tables.locations.enumerated() {
            message.message(Field.Profile.location) {
                $0.uint(Field.Location.id, UInt64(index + 1))
                $0.uint(Field.Location.mappingID, location.module.map { UInt64($0 + 1) } ?? 0)
                $0.uint(Field.Location.address, UInt64(location.address))
                for line in location.lines {
                    $0.message(Field.Location.line) {
                        $0.uint(Field.Line.functionID, UInt64(line.function + 1))
                        $0.uint(Field.Line.line, line.line)
                    }
                }
            }
        }
        for (index, function) in tables.functions.enumerated() {
            message.message(Field.Profile.function) {
                $0.uint(Field.Function.id, UInt64(index + 1))
                $0.int(Field.Function.name, function.name)
                $0.int(Field.Function.systemName, function.name)
                $0.int(Field.Function.filename, function.file)
            }
        }

        for (index, module) in tables.modules.enumerated() {
            let filename = tables.strings.index(module.path), buildID = tables.strings.index(module.buildID ?? "")
            message.message(Field.Profile.mapping) {
                $0.uint(Field.Mapping.id, UInt64(index + 1))
                $0.uint(Field.Mapping.start, UInt64(module.start))
                $0.uint(Field.Mapping.limit, UInt64(module.end))
                $0.uint(Field.Mapping.offset, UInt64(module.fileOffset))
                $0.int(Field.Mapping.filename, filename)
                $0.int(Field.Mapping.buildID, buildID)
                $0.uint(Field.Mapping.hasFunctions, 1)
            }
        }
        // Comments: the command, then the profiler's own figures (the summary's lines).
        let comments = ([profile.command] + (profile.measurementLine == nil ? [] : profile.summary.split(separator: "\n").map(String.init)))
            .filter { !$0.isEmpty }.map { UInt64(tables.strings.index($0)) }
        let periodTypeIndex = tables.strings.index(timeType), periodUnitIndex = tables.strings.index(unit)
        var tail = ProtobufWriter()
        for string in tables.strings.strings { tail.string(Field.Profile.stringTable, string) }
        tail.int(Field.Profile.timeNanos, Int64(profile.realtimeStartNanoseconds))
        tail.int(Field.Profile.durationNanos, Int64(profile.durationNanoseconds))
        if let period {
            tail.message(Field.Profile.periodType) {
                $0.int(Field.ValueType.type, periodTypeIndex)
                $0.int(Field.ValueType.unit, periodUnitIndex)
            }
            tail.int(Field.Profile.period, Int64(period))
        }
        if !comments.isEmpty { tail.packed(Field.Profile.comment, comments) }
        return message.bytes + tail.bytes
    }
}
