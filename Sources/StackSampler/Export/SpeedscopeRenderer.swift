/// speedscope's JSON format (https://www.speedscope.app/file-format-schema.json): frames shared
/// by name, each with its source file when source lines were resolved (else its module), one `sampled` profile per thread (one for all stacks without a thread), each
/// unique stack a sample weighted by its samples' time in ns (by its count when the period
/// is unknown).
enum SpeedscopeRenderer: ProfileRenderer {
    static func render(_ profile: Profile, options: ExportOptions) -> [UInt8] {
        var frameIndex: [String: Int] = [:]
        var frameList: [(name: String, file: String?)] = []
        var stacksByThread: [Int: [(frames: [Int], count: Int)]] = [:]
        for stack in profile.stacks where stack.count > 0 {
            let frames = profile.shownFrames(of: stack, options: ExportOptions(perThreadRoots: false)).map { frame in
                let name = profile.name(of: frame)
                if let known = frameIndex[name] { return known }
                var file: String?
                switch frame {
                case .code(let address), .inlined(let address, _): file = profile.location(of: frame)?.file ?? profile.frames[address]?.modulePath
                case .processRoot, .threadRoot, .cut, .asyncTask: file = nil
                }
                frameList.append((name, file))
                frameIndex[name] = frameList.count - 1
                return frameList.count - 1
            }
            let thread = profile.threads.indices.contains(stack.thread) ? stack.thread : -1
            stacksByThread[thread, default: []].append((frames, stack.count))
        }
        let weight: UInt64 = profile.configuration?.sampleWeight ?? 1

        var json = JSONWriter()
        json.beginObject()
        json.field("$schema", "https://www.speedscope.app/file-format-schema.json")
        json.key("shared")
        json.beginObject()
        json.key("frames")
        json.beginArray()
        for frame in frameList {
            json.beginObject()
            json.field("name", frame.name)
            if let file = frame.file { json.field("file", file) }
            json.endObject()
        }
        json.endArray()
        json.endObject()
        json.key("profiles")
        json.beginArray()
        for thread in stacksByThread.keys.sorted() {
            let stacks = stacksByThread[thread]!
            json.beginObject()
            json.field("type", "sampled")
            json.field("name", thread >= 0 ? "\(profile.threads[thread].name) tid=\(profile.threads[thread].id)" : "all threads")
            json.field("unit", profile.configuration?.event == nil && profile.configuration != nil ? "nanoseconds" : "none")
            json.field("startValue", 0)
            json.field("endValue", stacks.reduce(UInt64(0)) { $0 + UInt64($1.count) * weight })
            json.key("samples")
            json.beginArray()
            for stack in stacks {
                json.beginArray()
                for frame in stack.frames { json.integer(frame) }
                json.endArray()
            }
            json.endArray()
            json.key("weights")
            json.beginArray()
            for stack in stacks { json.integer(UInt64(stack.count) * weight) }
            json.endArray()
            json.endObject()
        }
        json.endArray()
        json.field("name", profile.headline + " (" + ([profile.settingsLine, profile.measurementLine].compactMap { $0 }.joined(separator: "; ")) + ")")
        json.field("activeProfileIndex", 0)
        json.field("exporter", "StackSampler")
        json.endObject()
        return Array(json.text.utf8)
    }
}
