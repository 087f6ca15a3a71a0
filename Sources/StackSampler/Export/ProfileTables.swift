/// A profile laid out as the tables pprof and OTLP profiles share: strings, functions (by name and
/// file), locations (one per address, with the calls inlined there as lines), mappings (the
/// modules), and samples pointing at locations. Per-thread roots are thread indices on the
/// samples, not frames; inlined calls are lines of their address's location. Indices are 0-based.
struct ProfileTables {
    /// A function: indices into `strings`.
    struct Function: Hashable {
        var name: Int64
        var file: Int64
    }

    /// One line of a location: a function (index into `functions`) and its source line (0: unknown).
    struct Line {
        var function: Int
        var line: UInt64
    }

    /// A location: its module (index into `modules`), its address (0 for a frame without one) and
    /// its lines, innermost inlined call first, its function last.
    struct Location {
        var module: Int?
        var address: UInt
        var lines: [Line]
    }

    /// A unique stack: locations leaf first, its samples, and its thread (index into `Profile.threads`).
    struct Sample {
        var locations: [Int]
        var count: Int
        var thread: Int
    }

    /// Every string once, the empty string first.
    var strings = StringTable()
    var functions: [Function] = []
    var locations: [Location] = []
    var samples: [Sample] = []
    /// The profile's modules, by start address.
    let modules: [Module]

    /// The tables of `profile` (stacks without samples left out).
    init(_ profile: Profile) {
        modules = profile.modules.sorted { $0.start < $1.start }
        var functionIndices: [Function: Int] = [:]
        var locationIndices: [ShownFrame: Int] = [:]
        func function(named name: String, file: String) -> Int {
            let key = Function(name: strings.index(name), file: strings.index(file))
            if let known = functionIndices[key] { return known }
            functions.append(key)
            functionIndices[key] = functions.count - 1
            return functions.count - 1
        }
        func location(of frame: ShownFrame) -> Int {
            if let known = locationIndices[frame] { return known }
            var address: UInt = 0
            var module: Int?
            var shown = [frame]
            if case .code(let code) = frame {
                address = code
                module = Self.moduleIndex(containing: code, in: modules)
                shown += (profile.frames[code]?.inlined.indices ?? 0..<0).map { ShownFrame.inlined(code, index: $0) }
            }
            let modulePath = module.map { modules[$0].path } ?? ""
            let lines = shown.reversed().map { line in
                let source = profile.location(of: line)
                return Line(function: function(named: profile.functionName(of: line), file: source?.file ?? modulePath),
                            line: UInt64(source?.line ?? 0))
            }
            locations.append(Location(module: module, address: address, lines: lines))
            locationIndices[frame] = locations.count - 1
            return locations.count - 1
        }
        for stack in profile.stacks where stack.count > 0 {
            let frames = profile.shownFrames(of: stack, options: ExportOptions(perThreadRoots: false)).filter {
                if case .inlined = $0 { false } else { true }
            }
            samples.append(Sample(locations: frames.reversed().map(location(of:)), count: stack.count, thread: stack.thread))
        }
    }

    /// The index in `modules` (sorted by start) of the module containing `address`.
    private static func moduleIndex(containing address: UInt, in modules: [Module]) -> Int? {
        let low = modules.firstIndex(startingAfter: address) { $0.start }
        guard low > 0, address < modules[low - 1].end else { return nil }
        return low - 1
    }

    /// A string table: every string once, the empty string first (entry 0 in pprof and OTLP alike).
    struct StringTable {
        private(set) var strings = [""]
        private var indices = ["": Int64(0)]

        /// The index of `string`, added if new.
        mutating func index(_ string: String) -> Int64 {
            if let known = indices[string] { return known }
            strings.append(string)
            indices[string] = Int64(strings.count - 1)
            return Int64(strings.count - 1)
        }
    }
}
