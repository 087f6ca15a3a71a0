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
        var strings = StringTable()
        var message = ProtobufWriter()
        let period = profile.configuration?.sampleWeight
        let timeType = profile.configuration?.sampleType ?? "cpu", unit = profile.configuration?.sampleUnit ?? "nanoseconds"
        var sampleTypes = [("samples", "count")]
        if period != nil { sampleTypes.append((timeType, unit)) }
        for (type, unit) in sampleTypes {
            let typeIndex = strings.index(type), unitIndex = strings.index(unit)
            message.message(Field.Profile.sampleType) {
                $0.int(Field.ValueType.type, typeIndex)
                $0.int(Field.ValueType.unit, unitIndex)
            }
        }

        var locations: [ShownFrame: UInt64] = [:]
        var locationMessages = ProtobufWriter()
        var functions: [String: UInt64] = [:]
        var functionMessages = ProtobufWriter()
        let modules = profile.modules.sorted { $0.start < $1.start }
        func function(named name: String, file: String) -> UInt64 {
            let functionKey = name + "\u{0}" + file
            if let known = functions[functionKey] { return known }
            let functionID = UInt64(functions.count + 1)
            functions[functionKey] = functionID
            let nameIndex = strings.index(name), fileIndex = strings.index(file)
            functionMessages.message(Field.Profile.function) {
                $0.uint(Field.Function.id, functionID)
                $0.int(Field.Function.name, nameIndex)
                $0.int(Field.Function.systemName, nameIndex)
                $0.int(Field.Function.filename, fileIndex)
            }
            return functionID
        }
        func location(of frame: ShownFrame) -> UInt64 {
            if let known = locations[frame] { return known }
            let id = UInt64(locations.count + 1)
            locations[frame] = id
            var address: UInt = 0
            var mappingID: UInt64 = 0
            var shown = [frame]
            if case .code(let code) = frame {
                address = code
                if let index = moduleIndex(containing: code, in: modules) { mappingID = UInt64(index + 1) }
                shown += (profile.frames[code]?.inlined.indices ?? 0..<0).map { ShownFrame.inlined(code, index: $0) }
            }
            let modulePath = mappingID > 0 ? modules[Int(mappingID) - 1].path : ""
            let lines = shown.reversed().map { line in
                let source = profile.location(of: line)
                return (function(named: profile.functionName(of: line), file: source?.file ?? modulePath), UInt64(source?.line ?? 0))
            }
            locationMessages.message(Field.Profile.location) {
                $0.uint(Field.Location.id, id)
                $0.uint(Field.Location.mappingID, mappingID)
                $0.uint(Field.Location.address, UInt64(address))
                for (functionID, number) in lines {
                    $0.message(Field.Location.line) {
                        $0.uint(Field.Line.functionID, functionID)
                        if number > 0 { $0.uint(Field.Line.line, number) }
                    }
                }
            }
            return id
        }

        let threadIDKey = strings.index("thread_id"), threadNameKey = strings.index("thread_name")
        let threadNames = profile.threads.map { strings.index($0.name) }
        for stack in profile.stacks where stack.count > 0 {
            // Inlined calls are lines of their address's location, not locations of their own.
            let frames = profile.shownFrames(of: stack, options: ExportOptions(perThreadRoots: false)).filter {
                if case .inlined = $0 { false } else { true }
            }
            let ids = frames.reversed().map(location(of:))
            var values = [UInt64(stack.count)]
            if let period { values.append(UInt64(stack.count) * period) }
            message.message(Field.Profile.sample) {
                $0.packed(Field.Sample.locationID, ids)
                $0.packed(Field.Sample.value, values)
                guard profile.threads.indices.contains(stack.thread) else { return }
                let thread = profile.threads[stack.thread]
                $0.message(Field.Sample.label) {
                    $0.int(Field.Label.key, threadIDKey)
                    $0.int(Field.Label.number, Int64(thread.id))
                }
                $0.message(Field.Sample.label) {
                    $0.int(Field.Label.key, threadNameKey)
                    $0.int(Field.Label.string, threadNames[stack.thread])
                }
            }
        }

        for (index, module) in modules.enumerated() {
            let filename = strings.index(module.path), buildID = strings.index(module.buildID ?? "")
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
            .filter { !$0.isEmpty }.map { UInt64(strings.index($0)) }
        let periodTypeIndex = strings.index(timeType), periodUnitIndex = strings.index(unit)
        var tail = ProtobufWriter()
        for string in strings.strings { tail.string(Field.Profile.stringTable, string) }
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
        return message.bytes + locationMessages.bytes + functionMessages.bytes + tail.bytes
    }

    /// The index in `modules` (sorted by start) of the module containing `address`.
    private static func moduleIndex(containing address: UInt, in modules: [Module]) -> Int? {
        var low = 0, high = modules.count
        while low < high {
            let middle = (low + high) / 2
            if modules[middle].start <= address { low = middle + 1 } else { high = middle }
        }
        guard low > 0, address < modules[low - 1].end else { return nil }
        return low - 1
    }

    /// pprof's string table: every string once, the empty string first.
    private struct StringTable {
        private(set) var strings = [""]
        private var indices = ["": Int64(0)]

        mutating func index(_ string: String) -> Int64 {
            if let known = indices[string] { return known }
            strings.append(string)
            indices[string] = Int64(strings.count - 1)
            return Int64(strings.count - 1)
        }
    }
}
