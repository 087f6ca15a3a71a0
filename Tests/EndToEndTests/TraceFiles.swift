import Foundation

/// A Chrome Trace Event file of invocations, as `STACKSAMPLER_INVOCATIONS` writes it.
struct ChromeTrace {
    /// One complete (`ph:"X"`) event.
    struct Event {
        let name: String
        /// Start and duration in microseconds.
        let ts: Double
        let dur: Double
        let pid: Int
        let tid: Int
        /// From `args`.
        let id: Int
        let parent: Int?
        let trace: Int
        let samples: Int

        /// Duration in milliseconds.
        var milliseconds: Double { dur / 1000 }
    }

    /// The complete events, in file order.
    let events: [Event]
    /// `thread_name` metadata by tid.
    let threadNames: [Int: String]
    /// The object under `otherData`.
    let otherData: [String: Any]

    /// Reads and parses `path`; throws if it is not a trace object with the expected fields.
    init(contentsOf path: String) throws {
        let object = try JSONSerialization.jsonObject(with: try Data(contentsOf: URL(fileURLWithPath: path)))
        guard let root = object as? [String: Any], let list = root["traceEvents"] as? [[String: Any]] else {
            throw HarnessError("\(path) is not {\"traceEvents\":[…]}")
        }
        var events: [Event] = []
        var threadNames: [Int: String] = [:]
        for entry in list {
            let args = entry["args"] as? [String: Any] ?? [:]
            switch entry["ph"] as? String {
            case "M":
                if entry["name"] as? String == "thread_name", let tid = entry["tid"] as? Int { threadNames[tid] = args["name"] as? String }
            case "X":
                guard let name = entry["name"] as? String, let ts = entry["ts"] as? Double, let dur = entry["dur"] as? Double,
                      let pid = entry["pid"] as? Int, let tid = entry["tid"] as? Int, let id = args["id"] as? Int,
                      let trace = args["trace"] as? Int, let samples = args["samples"] as? Int
                else { throw HarnessError("incomplete X event in \(path): \(entry)") }
                events.append(Event(name: name, ts: ts, dur: dur, pid: pid, tid: tid, id: id, parent: args["parent"] as? Int,
                                    trace: trace, samples: samples))
            default:
                throw HarnessError("unexpected event in \(path): \(entry)")
            }
        }
        self.events = events
        self.threadNames = threadNames
        otherData = root["otherData"] as? [String: Any] ?? [:]
    }

    /// Events named `name`, by start time.
    func events(named name: String) -> [Event] {
        events.filter { $0.name == name }.sorted { $0.ts < $1.ts }
    }

    /// Events whose parent is `event`.
    func children(of event: Event) -> [Event] {
        events.filter { $0.parent == event.id }.sorted { $0.ts < $1.ts }
    }

    /// Violations of the nesting rules: an event outside its parent's time or on another thread,
    /// or overlapping the previous event under the same parent. Times are compared to the
    /// file's resolution (1 ns).
    func nestingProblems() -> [String] {
        let byID = Dictionary(events.map { ($0.id, $0) }) { first, _ in first }
        let tolerance = 0.0015
        var problems: [String] = []
        for event in events {
            guard let parentID = event.parent, let parent = byID[parentID] else { continue }
            if event.tid != parent.tid { problems.append("\(event.name) #\(event.id) is on another thread than its parent") }
            if event.ts < parent.ts - tolerance || event.ts + event.dur > parent.ts + parent.dur + tolerance {
                problems.append("\(event.name) #\(event.id) [\(event.ts), +\(event.dur)] is outside \(parent.name) #\(parent.id) [\(parent.ts), +\(parent.dur)]")
            }
        }
        let siblings = Dictionary(grouping: events) { "\($0.tid)/\($0.parent ?? -1)" }
        for group in siblings.values {
            let ordered = group.sorted { $0.ts < $1.ts }
            for (previous, next) in zip(ordered, ordered.dropFirst()) where next.ts < previous.ts + previous.dur - tolerance {
                problems.append("\(next.name) #\(next.id) starts before its sibling \(previous.name) #\(previous.id) ends")
            }
        }
        return problems
    }
}

/// A speedscope file of evented profiles, as the invocation exporter writes it.
struct SpeedscopeFile {
    /// One profile: its name and its events as (type, frame name, at).
    struct EventedProfile {
        let name: String
        let events: [(type: String, frame: String, at: Double)]
        let endValue: Double
    }

    let profiles: [EventedProfile]

    /// Reads and parses `path`, checking the schema's required fields.
    init(contentsOf path: String) throws {
        let object = try JSONSerialization.jsonObject(with: try Data(contentsOf: URL(fileURLWithPath: path)))
        guard let root = object as? [String: Any], root["$schema"] as? String == "https://www.speedscope.app/file-format-schema.json",
              let frames = ((root["shared"] as? [String: Any])?["frames"] as? [[String: Any]])?.compactMap({ $0["name"] as? String }),
              let profiles = root["profiles"] as? [[String: Any]]
        else { throw HarnessError("\(path) is not a speedscope file with $schema, shared.frames and profiles") }
        self.profiles = try profiles.map { profile in
            guard profile["type"] as? String == "evented", let name = profile["name"] as? String,
                  let unit = profile["unit"] as? String, !unit.isEmpty, profile["startValue"] is Double,
                  let endValue = profile["endValue"] as? Double, let events = profile["events"] as? [[String: Any]]
            else { throw HarnessError("profile in \(path) lacks evented fields: \(profile.keys.sorted())") }
            return EventedProfile(name: name, events: try events.map { event in
                guard let type = event["type"] as? String, let frame = event["frame"] as? Int, frames.indices.contains(frame),
                      let at = event["at"] as? Double
                else { throw HarnessError("bad event in \(path): \(event)") }
                return (type, frames[frame], at)
            }, endValue: endValue)
        }
    }

    /// Violations of the evented rules: `at` decreasing, a close not matching the innermost open
    /// frame, frames left open, events after `endValue`.
    func balanceProblems() -> [String] {
        var problems: [String] = []
        for profile in profiles {
            var open: [String] = []
            var last = -Double.infinity
            for event in profile.events {
                if event.at < last { problems.append("\(profile.name): at goes back from \(last) to \(event.at)") }
                last = event.at
                switch event.type {
                case "O": open.append(event.frame)
                case "C":
                    if open.popLast() != event.frame { problems.append("\(profile.name): C \(event.frame) at \(event.at) does not close the innermost open frame") }
                default: problems.append("\(profile.name): event type \(event.type)")
                }
            }
            if !open.isEmpty { problems.append("\(profile.name): \(open.count) frames left open") }
            if last > profile.endValue { problems.append("\(profile.name): events after endValue") }
        }
        return problems
    }
}
