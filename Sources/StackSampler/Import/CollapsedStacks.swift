/// A line of collapsed-stack text that is not `frame;…;frame COUNT`.
package struct CollapsedStacksError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 1-based line number.
    package var line: Int
    /// The line itself.
    package var text: String

    /// What is wrong, for the user.
    package var description: String {
        "line \(line) is not collapsed stacks ('frame;frame;… COUNT' with a whole count): \(text.prefix(200))"
    }
}

extension Profile {
    /// A profile read from collapsed stacks (ours, FlameGraph's stackcollapse scripts, perf or
    /// async-profiler output): each unique frame name gets a synthetic address, so every
    /// exporter works on it. A first frame `[name tid=N]` makes a thread (as our per-thread
    /// roots), after a process root `[name pid=N]` (`record --follow-children`) a thread of that
    /// process; a cut marker after them (`[truncated]`, `[no unwind info]`…) marks a stack that
    /// stops short. Stacks without a thread root belong to no thread (a process root alone stays
    /// a frame, as does a marker after it). Blank lines and `#` comments are skipped. The mode and period are unknown.
    package init(collapsedStacks text: String, command: String) throws(CollapsedStacksError) {
        var addresses: [Substring: UInt] = [:]
        var frames: [UInt: SymbolizedFrame] = [:]
        var threadIndex: [Substring: Int] = [:]
        var threads: [Thread] = []
        var stacks: [Stack] = []
        let newline = UInt8(ascii: "\n"), space = UInt8(ascii: " "), semicolon = UInt8(ascii: ";")
        for (number, rawLine) in text.utf8.split(separator: newline, omittingEmptySubsequences: false).enumerated() {
            let content = Self.trimmed(rawLine)
            if content.isEmpty || content.first == UInt8(ascii: "#") { continue }
            guard let lastSpace = content.lastIndex(of: space), let count = Int(Substring(content[content.index(after: lastSpace)...])),
                  count >= 0
            else {
                throw CollapsedStacksError(line: number + 1, text: String(Substring(rawLine)))
            }
            var names = content[..<lastSpace].split(separator: semicolon, omittingEmptySubsequences: false).map(Substring.init)[...]
            var stack = Stack(thread: -1, addresses: [], count: count)
            // A process root is read only before a thread root: alone, it stays a frame (a thread
            // is what carries a stack's process), and so does anything after it.
            var process: (frame: Substring, name: String, id: Int32)?
            if names.count > 1, let root = Self.root(names[names.startIndex], key: " pid="),
               Self.root(names[names.startIndex + 1], key: " tid=") != nil {
                process = (names[names.startIndex], root.name, root.id)
                names = names.dropFirst()
            }
            if let root = names.first, let thread = Self.root(root, key: " tid=") {
                let key = process.map { $0.frame + ";" + root } ?? root
                stack.thread = threadIndex[key] ?? {
                    var entry = Thread(id: thread.id, name: thread.name, samples: 0, cpuNanoseconds: 0, observedNanoseconds: 0)
                    if let process {
                        entry.processID = process.id
                        entry.processName = process.name
                    }
                    threads.append(entry)
                    threadIndex[key] = threads.count - 1
                    return threads.count - 1
                }()
                threads[stack.thread].samples += count
                names = names.dropFirst()
            }
            if let first = names.first, let cut = Profile.StackCut.allCases.first(where: { $0.marker == first }) {
                stack.cut = cut
                names = names.dropFirst()
            }
            stack.addresses = names.map { name in
                if let known = addresses[name] { return known }
                let address = UInt(addresses.count + 1)
                addresses[name] = address
                frames[address] = SymbolizedFrame(name: String(name), modulePath: nil, moduleOffset: nil,
                                                  kind: Self.kind(ofName: name), isResolved: true)
                return address
            }
            stacks.append(stack)
        }
        self.init(configuration: nil, startNanoseconds: 0, durationNanoseconds: 0, signal: "",
                  signalSubstituted: false, stacks: stacks, threads: threads, frames: frames, modules: [],
                  losses: Losses(), command: command)
    }

    /// `line` without surrounding blanks and a carriage return (working on UTF-8 bytes: splitting
    /// by characters costs several times more on large inputs).
    private static func trimmed(_ line: Substring.UTF8View) -> Substring.UTF8View {
        var line = line
        while let last = line.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") || last == UInt8(ascii: "\r") {
            line = line.dropLast()
        }
        while let first = line.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { line = line.dropFirst() }
        return line
    }

    /// The name and id of a `[name tid=N]` (`key` " tid=") or `[name pid=N]` (" pid=") root frame.
    private static func root(_ frame: Substring, key: String) -> (name: String, id: Int32)? {
        guard frame.first == "[", frame.last == "]", let marker = frame.lastRange(of: key),
              let id = Int32(frame[marker.upperBound..<frame.index(before: frame.endIndex)])
        else { return nil }
        return (String(frame[frame.index(after: frame.startIndex)..<marker.lowerBound]), id)
    }

    /// The kind of code a demangled name most likely is, for colours: kernel frames
    /// (`_[k]` suffix of perf and async-profiler) and `module+0x…` or `[…]` names are unknown.
    static func kind(ofName name: Substring) -> FrameKind {
        if name.hasSuffix("_[k]") || name.first == "[" || name.containsText("+0x") { return .unknown }
        if name.hasPrefix("_Z") || name.containsText("::") { return .cpp }
        if name.hasPrefix("$s") || name.hasPrefix("_$s") { return .swift }
        for prefix in ["closure #", "specialized ", "partial apply for ", "merged ", "protocol witness for "] where name.hasPrefix(prefix) {
            return .swift
        }
        if let parenthesis = name.firstIndex(of: "("), name[..<parenthesis].contains(".") { return .swift }
        return .native
    }
}
