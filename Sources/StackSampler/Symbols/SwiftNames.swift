/// Readable Swift names from the runtime's full demangling, in the spirit of the toolchain's
/// `swift demangle --simplified` (the runtime's `swift_demangle` has no option for it):
/// `m.Matrix.multiply(m.Matrix) -> m.Matrix` becomes `Matrix.multiply(_:)`.
///
/// Module qualifiers, argument types, return and accessor types, `where` clauses and closure
/// signatures are dropped; argument labels are kept. Async partial functions (`(1) await resume
/// partial function for X`) and merged functions are shown as the function they belong to, and
/// generic or function-signature specializations as the function they specialize, unless asked
/// to keep them apart (then `specialized X`). Text it does not recognise is returned unchanged.
enum SwiftNames {
    /// The readable form of `demangled`, the runtime's full demangling of a Swift symbol.
    static func readable(_ demangled: String, keepingSpecializations: Bool = false) -> String {
        var text = Array(demangled.utf8)[...]
        if let suffix = find(" with unmangled suffix ", in: text) { text = text[..<suffix] }
        var output = readable(text, keepingSpecializations: keepingSpecializations)
        // Names built from nested specializations can repeat the word.
        let doubled = Array("specialized specialized ".utf8)
        while let index = find(doubled, in: output[...]) { output.removeSubrange(index..<index + 12) }
        return String(decoding: output, as: UTF8.self)
    }

    private static func readable(_ input: ArraySlice<UInt8>, keepingSpecializations: Bool) -> [UInt8] {
        var text = input
        var prefix: [UInt8] = []
        while true {
            if eat("merged ", from: &text) || eat("async function pointer to ", from: &text) || eatPartialFunction(&text) {
                continue
            }
            if eat("partial apply forwarder for ", from: &text) || eat("partial apply for ", from: &text) {
                prefix += Array("partial apply for ".utf8)
            } else if eatSpecialization(&text) {
                if keepingSpecializations { prefix += Array("specialized ".utf8) }
            } else if eat("dispatch thunk of ", from: &text) {
                prefix += Array("dispatch thunk of ".utf8)
            } else if eat("static ", from: &text) {
                prefix += Array("static ".utf8)
            } else {
                break
            }
        }
        if eat("protocol witness for ", from: &text), let conformance = lastTopLevel(" in conformance ", in: text) {
            return prefix + Array("protocol witness for ".utf8)
                + readable(text[..<conformance], keepingSpecializations: keepingSpecializations)
                + Array(" in conformance ".utf8) + conformingType(text[(conformance + 16)...])
        }
        if let thunk = reabstractionThunk(text) { return prefix + thunk }
        if let described = descriptor(text) { return prefix + described }
        if let context = closureContext(text) {
            return prefix + context.kind + Array(" in ".utf8)
                + readable(context.parent, keepingSpecializations: keepingSpecializations)
        }
        return prefix + entity(text)
    }

    /// `reabstraction thunk helper <…> from A to B` as `thunk for A`.
    private static func reabstractionThunk(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var rest = text
        guard eat("reabstraction thunk helper ", from: &rest) || eat("reabstraction thunk ", from: &rest) else { return nil }
        while rest.first == UInt8(ascii: "<"), let close = matching(rest.startIndex, in: rest) {
            rest = rest[(close + 1)...].drop { $0 == UInt8(ascii: " ") }
        }
        guard eat("from ", from: &rest), let to = lastTopLevel(" to ", in: rest) else { return nil }
        return Array("thunk for ".utf8) + rest[..<to]
    }

    /// `T : P in M` (optionally with a generic signature first) as `T`.
    private static func conformingType(_ text: ArraySlice<UInt8>) -> [UInt8] {
        var type = text
        var signature: [UInt8] = []
        if type.first == UInt8(ascii: "<"), let close = matching(type.startIndex, in: type) {
            let clause = type[type.startIndex..<close]
            signature = Array(find(" where ", in: clause).map { type[type.startIndex..<$0] } ?? clause) + Array("> ".utf8)
            type = type[(close + 1)...].drop { $0 == UInt8(ascii: " ") }
        }
        if let colon = firstTopLevel(" : ", in: type) { type = type[..<colon] }
        return signature + entity(type)
    }

    /// Metadata and witness functions: `type metadata accessor for T`, `X value witness for T`
    /// (as `X for T`), `lazy protocol witness table accessor for type T and conformance …`.
    private static func descriptor(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        let isWordByte = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "#") || isIdentifierByte(byte) }
        if let ofIndex = find(" of ", in: text), text[text.startIndex..<ofIndex].allSatisfy(isWordByte) {
            return Array(text[text.startIndex..<(ofIndex + 4)]) + readable(text[(ofIndex + 4)...], keepingSpecializations: true)
        }
        guard let forIndex = find(" for ", in: text), text[text.startIndex..<forIndex].allSatisfy(isWordByte) else { return nil }
        var words = Array(text[text.startIndex..<forIndex])
        if words.count > 14, words.suffix(14).elementsEqual(" value witness".utf8) { words.removeLast(14) }
        var subject = text[(forIndex + 5)...]
        if subject.starts(with: "type ".utf8), let and = lastTopLevel(" and conformance ", in: subject) {
            return words + Array(" for type ".utf8) + conformingType(subject[(subject.startIndex + 5)..<and])
                + Array(" and conformance ".utf8) + conformingType(subject[(and + 17)...])
        }
        if words.elementsEqual("associated type witness table accessor".utf8),
           let colon = firstTopLevel(" : ", in: subject), let inIndex = firstTopLevel(" in ", in: subject[colon...]) {
            return words + Array(" for ".utf8) + entity(subject[..<colon]) + Array(" : ".utf8)
                + entity(subject[(colon + 3)..<inIndex]) + Array(" in ".utf8) + conformingType(subject[(inIndex + 4)...])
        }
        if subject.starts(with: "generic protocol witness table for ".utf8) {
            words += Array(" for generic protocol witness table".utf8)
            subject = subject.dropFirst(36)
        }
        return words + Array(" for ".utf8) + conformingType(subject)
    }

    /// `closure #1 (Swift.Int) -> () in REST` (also `implicit closure #N`, `$defer #N`, local
    /// functions `name #N`): the kind without its signature, and REST.
    private static func closureContext(_ text: ArraySlice<UInt8>) -> (kind: [UInt8], parent: ArraySlice<UInt8>)? {
        guard let hash = find(" #", in: text) else { return nil }
        let head = text[text.startIndex..<hash]
        let words = head.split(separator: UInt8(ascii: " "))
        guard words.count == 1 || (words.count == 2 && words[0].elementsEqual("implicit".utf8)),
              !head.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "(") }) else { return nil }
        var end = hash + 2
        while end < text.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[end]) { end += 1 }
        guard end > hash + 2, let separator = firstTopLevel(" in ", in: text[end...]) else { return nil }
        var kind = Array(text[text.startIndex..<end])
        if !words[words.count - 1].elementsEqual("closure".utf8), text[end...].starts(with: " (".utf8) {
            kind += [UInt8(ascii: " ")] + argumentLabels(text[(end + 1)...])  // A local function: `inner #1 (_:)`.
        }
        return (kind, text[(separator + 4)...])
    }

    /// A declaration `Module.Type.name<Generics where …>(label: Type, …) -> Result` or an
    /// accessor `Module.Type.name.getter : Type`, as `Type.name<Generics>(label:…)`.
    private static func entity(_ text: ArraySlice<UInt8>) -> [UInt8] {
        var path: [UInt8] = []
        var componentStarts = [0]
        var index = text.startIndex
        var arguments: [UInt8] = []
        scan: while index < text.endIndex {
            let byte = text[index]
            if let operatorEnd = operatorName(at: index, in: text, componentStart: path.count == componentStarts.last) {
                path += text[index..<operatorEnd]
                index = operatorEnd
                continue
            }
            switch byte {
            case UInt8(ascii: "("):
                if starts(with: "(extension in ", at: index, in: text), let close = matching(index, in: text) {
                    // `(extension in M):M.Type` — the extension's module says nothing more.
                    index = close + 1
                    if index < text.endIndex, text[index] == UInt8(ascii: ":") { index += 1 }
                    continue
                }
                if let close = matching(index, in: text), let privateDeclaration = privateName(text[(index + 1)..<close]) {
                    path += privateDeclaration  // `(Name in _0123ABCD)`: a private declaration's discriminator.
                    index = close + 1
                    continue
                }
                arguments = argumentLabels(text[index...])
                break scan
            case UInt8(ascii: "<"):
                guard let close = matching(index, in: text) else { break scan }
                let clause = text[index..<close]
                path += find(" where ", in: clause).map { text[index..<$0] } ?? clause
                path.append(UInt8(ascii: ">"))
                index = close + 1
            case UInt8(ascii: "["):
                guard let close = matching(index, in: text) else { break scan }
                path += text[index...close]
                index = close + 1
            case UInt8(ascii: " "):
                if starts(with: " : ", at: index, in: text) { break scan }  // Accessor's type.
                path.append(byte)
                index += 1
            case UInt8(ascii: "."):
                path.append(byte)
                componentStarts.append(path.count)
                index += 1
            default:
                path.append(byte)
                index += 1
            }
        }
        // The first component is the module, unless it is a type written as a literal (`[A : B]`).
        let dropped = componentStarts.count > 1 && path[0..<componentStarts[1] - 1].allSatisfy(isIdentifierByte) ? componentStarts[1] : 0
        return Array(path[dropped...]) + arguments
    }

    /// `(label: A, _: B, C)` as `(label:_:_:)`; `()` stays `()`.
    private static func argumentLabels(_ text: ArraySlice<UInt8>) -> [UInt8] {
        guard let close = matching(text.startIndex, in: text) else { return [] }
        let inside = text[(text.startIndex + 1)..<close]
        guard !inside.isEmpty else { return Array("()".utf8) }
        var result: [UInt8] = [UInt8(ascii: "(")]
        var argumentStart = inside.startIndex
        var depth = 0
        for index in inside.indices {
            depth += bracketDelta(at: index, in: inside)
            let ends = index == inside.endIndex - 1 || (depth == 0 && inside[index] == UInt8(ascii: ","))
            guard ends else { continue }
            let argument = inside[argumentStart...index].drop { $0 == UInt8(ascii: " ") }
            let identifier = argument.prefix { isIdentifierByte($0) }
            let afterIdentifier = argument.dropFirst(identifier.count)
            result += !identifier.isEmpty && afterIdentifier.starts(with: Array(": ".utf8)) ? Array(identifier) : [UInt8(ascii: "_")]
            result.append(UInt8(ascii: ":"))
            argumentStart = index + 1
        }
        result.append(UInt8(ascii: ")"))
        return result
    }

    /// `Name` of a private discriminator `Name in _0123ABCD`.
    private static func privateName(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard let separator = find(" in _", in: text) else { return nil }
        let name = text[text.startIndex..<separator]
        return !name.isEmpty && name.allSatisfy(isIdentifierByte) ? name : nil
    }

    /// End of an operator's name (`< infix`, `..< infix`, `! prefix`) starting at `index`.
    private static func operatorName(at index: Int, in text: ArraySlice<UInt8>, componentStart: Bool) -> Int? {
        guard componentStart else { return nil }
        var end = index
        while end < text.endIndex, Array("/=-+!*%<>&|^~?.".utf8).contains(text[end]) { end += 1 }
        guard end > index else { return nil }
        for fixity in [" infix", " prefix", " postfix"] where starts(with: fixity, at: end, in: text) {
            return end + fixity.utf8.count
        }
        return nil
    }

    /// `(1) await resume partial function for ` / `(2) suspend resume partial function for `.
    private static func eatPartialFunction(_ text: inout ArraySlice<UInt8>) -> Bool {
        guard text.first == UInt8(ascii: "("), let close = text.firstIndex(of: UInt8(ascii: ")")) else { return false }
        var rest = text[(close + 1)...]
        guard eat(" await resume partial function for ", from: &rest) || eat(" suspend resume partial function for ", from: &rest)
        else { return false }
        text = rest
        return true
    }

    /// `generic specialization <…> of `, `function signature specialization <…> of ` and kin.
    /// The parameters are skipped up to the first `> of `, not by bracket matching: the demangler
    /// prints some of them unbalanced (`[Closure Propagated : …, Argument Types : []>`).
    private static func eatSpecialization(_ text: inout ArraySlice<UInt8>) -> Bool {
        guard let marker = find("specialization <", in: text),
              text[text.startIndex..<marker].allSatisfy({ [UInt8(ascii: " "), UInt8(ascii: "-")].contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }),
              let end = find("> of ", in: text[marker...]) else { return false }
        text = text[(end + 5)...]
        return true
    }

    // MARK: Scanning

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$") || byte >= 0x80
            || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// +1 for an opening bracket, -1 for a closing one (not the `>` of `->`), else 0.
    private static func bracketDelta(at index: Int, in text: ArraySlice<UInt8>) -> Int {
        switch text[index] {
        case UInt8(ascii: "("), UInt8(ascii: "["), UInt8(ascii: "<"): return 1
        case UInt8(ascii: ")"), UInt8(ascii: "]"): return -1
        case UInt8(ascii: ">"): return index > text.startIndex && text[index - 1] == UInt8(ascii: "-") ? 0 : -1
        default: return 0
        }
    }

    /// Index of the bracket closing the one at `open`.
    private static func matching(_ open: Int, in text: ArraySlice<UInt8>) -> Int? {
        var depth = 0
        for index in open..<text.endIndex {
            depth += bracketDelta(at: index, in: text)
            if depth == 0 { return index }
        }
        return nil
    }

    private static func topLevelMatches(_ needle: String, in text: ArraySlice<UInt8>) -> [Int] {
        let pattern = Array(needle.utf8)
        var depth = 0
        var result: [Int] = []
        var index = text.startIndex
        while index < text.endIndex {
            let componentStart = index == text.startIndex || [UInt8(ascii: "."), UInt8(ascii: " ")].contains(text[index - 1])
            if let operatorEnd = operatorName(at: index, in: text, componentStart: componentStart) {
                index = operatorEnd  // `<` of `< infix` opens nothing.
                continue
            }
            if depth == 0, text[index...].starts(with: pattern) { result.append(index) }
            depth = max(0, depth + bracketDelta(at: index, in: text))
            index += 1
        }
        return result
    }

    private static func firstTopLevel(_ needle: String, in text: ArraySlice<UInt8>) -> Int? {
        topLevelMatches(needle, in: text).first
    }

    private static func lastTopLevel(_ needle: String, in text: ArraySlice<UInt8>) -> Int? {
        topLevelMatches(needle, in: text).last
    }

    private static func find(_ needle: String, in text: ArraySlice<UInt8>) -> Int? {
        find(Array(needle.utf8), in: text)
    }

    private static func find(_ pattern: [UInt8], in text: ArraySlice<UInt8>) -> Int? {
        guard let first = pattern.first else { return nil }
        var index = text.startIndex
        while let candidate = text[index...].firstIndex(of: first) {
            if text[candidate...].starts(with: pattern) { return candidate }
            index = candidate + 1
        }
        return nil
    }

    private static func starts(with prefix: String, at index: Int, in text: ArraySlice<UInt8>) -> Bool {
        index <= text.endIndex && text[index...].starts(with: prefix.utf8)
    }

    private static func eat(_ prefix: String, from text: inout ArraySlice<UInt8>) -> Bool {
        guard text.starts(with: prefix.utf8) else { return false }
        text = text.dropFirst(prefix.utf8.count)
        return true
    }
}
