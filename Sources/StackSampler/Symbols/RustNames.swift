/// Rust symbol names as Rust's own tools show them (rustc-demangle's alternate form, as in
/// panics and backtraces): `rs::main` for the legacy `_ZN2rs4main17h6af98f44df74ee35E`, without
/// the hash; `<rs::S as rs::Tr>::t::{closure#0}` for the v0 `_RNC...`, without crate
/// disambiguators. Anything that does not parse is left to the other demanglers (nil).
enum RustNames {
    /// The readable name of a Rust symbol, legacy or v0; nil if `symbol` is not one.
    static func demangle(_ symbol: String) -> String? {
        var bytes = Array(symbol.utf8)[...]
        if let dot = bytes.firstIndex(of: UInt8(ascii: ".")), bytes.starts(with: Array("_R".utf8)) {
            bytes = bytes[..<dot] // `.llvm.NNN` and other suffixes the compiler's passes add
        }
        if bytes.starts(with: Array("_R".utf8)) {
            var parser = V0Parser(bytes.dropFirst(2))
            return parser.symbol()
        }
        return legacy(bytes)
    }

    /// `_ZN` {length, identifier} `17h` 16 hex digits `E`, maybe followed by `.suffix`s.
    private static func legacy(_ symbol: ArraySlice<UInt8>) -> String? {
        guard symbol.starts(with: Array("_ZN".utf8)) else { return nil }
        var rest = symbol.dropFirst(3)
        var elements: [ArraySlice<UInt8>] = []
        while let first = rest.first, first != UInt8(ascii: "E") {
            guard let (length, after) = decimal(rest), length > 0, after.count >= length else { return nil }
            elements.append(after.prefix(length))
            rest = after.dropFirst(length)
        }
        guard rest.first == UInt8(ascii: "E"), rest.count == 1 || rest.dropFirst().first == UInt8(ascii: "."),
              let hash = elements.last, isHash(hash), elements.count >= 2 else { return nil }
        return elements.dropLast().map(unescaped).joined(separator: "::")
    }

    /// `h` and 16 lowercase hexadecimal digits.
    private static func isHash(_ element: ArraySlice<UInt8>) -> Bool {
        element.count == 17 && element.first == UInt8(ascii: "h")
            && element.dropFirst().allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    private static let escapes: [String: String] = [
        "SP": "@", "BP": "*", "RF": "&", "LT": "<", "GT": ">", "LP": "(", "RP": ")", "C": ",",
    ]

    /// A legacy path element with its `$..$` escapes and `..` (`::`) decoded.
    private static func unescaped(_ element: ArraySlice<UInt8>) -> String {
        var text = String(decoding: element, as: UTF8.self)[...]
        if text.hasPrefix("_$") { text = text.dropFirst() }
        var output = ""
        while let first = text.first {
            if first == "$", let close = text.dropFirst().firstIndex(of: "$") {
                let code = String(text[text.index(after: text.startIndex)..<close])
                if let known = escapes[code] {
                    output += known
                } else if code.hasPrefix("u"), let value = UInt32(code.dropFirst(), radix: 16), let scalar = Unicode.Scalar(value) {
                    output.unicodeScalars.append(scalar)
                } else {
                    output += text[...close]
                }
                text = text[text.index(after: close)...]
            } else if text.hasPrefix("..") {
                output += "::"
                text = text.dropFirst(2)
            } else {
                output.append(first)
                text = text.dropFirst()
            }
        }
        return output
    }

    /// A decimal number at the start of `text` (`0`, or digits not starting with 0), and the rest.
    fileprivate static func decimal(_ text: ArraySlice<UInt8>) -> (Int, ArraySlice<UInt8>)? {
        if text.first == UInt8(ascii: "0") { return (0, text.dropFirst()) }
        var value = 0
        var rest = text
        while let digit = rest.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) {
            guard value < 1_000_000 else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
            rest = rest.dropFirst()
        }
        return rest.startIndex == text.startIndex ? nil : (value, rest)
    }
}

/// The v0 mangling (RFC 2603): a recursive-descent parser that prints as it goes. Back references
/// are followed with a bound on depth, so that a hostile name cannot exhaust the stack.
private struct V0Parser {
    private let text: ArraySlice<UInt8>
    private var position: Int
    private var depth = 0
    private static let maxDepth = 64

    init(_ text: ArraySlice<UInt8>) {
        self.text = text
        position = text.startIndex
    }

    /// The whole symbol: an optional encoding version, the path, then an optional instantiating crate.
    mutating func symbol() -> String? {
        if let first = peek(), isDigit(first) { return nil } // only version 0 (no number) exists
        guard let path = path(inValue: true) else { return nil }
        return path
    }

    private func peek() -> UInt8? { position < text.endIndex ? text[position] : nil }
    private func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private mutating func eat(_ character: Character) -> Bool {
        guard let byte = peek(), byte == character.asciiValue else { return false }
        position += 1
        return true
    }

    private mutating func next() -> UInt8? {
        guard let byte = peek() else { return nil }
        position += 1
        return byte
    }

    /// `{0-9a-zA-Z} _`: `_` alone is 0, else the digits' value plus 1 (wrapping).
    private mutating func base62() -> Int? {
        if eat("_") { return 0 }
        var value = 0
        while let byte = next() {
            if byte == UInt8(ascii: "_") { return value + 1 }
            let digit: Int
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = Int(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): digit = Int(byte - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): digit = Int(byte - UInt8(ascii: "A")) + 36
            default: return nil
            }
            value = value &* 62 &+ digit // crate disambiguators are 64-bit hashes: only their end matters
        }
        return nil
    }

    /// `s` base-62: the disambiguator (0 without one).
    private mutating func disambiguator() -> Int? {
        eat("s") ? base62().map { $0 + 1 } : 0
    }

    /// `[u] decimal [_] bytes`; Punycode (`u`) is shown as it is mangled.
    private mutating func identifier() -> String? {
        let punycode = eat("u")
        guard let (length, rest) = RustNames.decimal(text[position...]) else { return nil }
        position = rest.startIndex
        _ = eat("_")
        guard text.endIndex - position >= length else { return nil }
        let name = String(decoding: text[position..<position + length], as: UTF8.self)
        position += length
        return punycode ? "punycode{\(name)}" : name
    }

    /// Runs `body` at the back reference's target, then comes back.
    private mutating func backref<Result>(_ body: (inout V0Parser) -> Result?) -> Result? {
        guard let offset = base62(), depth < Self.maxDepth else { return nil }
        let target = text.startIndex + offset
        guard target < position - 1 else { return nil }
        let saved = position
        position = target
        depth += 1
        defer {
            depth -= 1
            position = saved
        }
        return body(&self)
    }

    private mutating func nested<Result>(_ body: (inout V0Parser) -> Result?) -> Result? {
        guard depth < Self.maxDepth else { return nil }
        depth += 1
        defer { depth -= 1 }
        return body(&self)
    }

    /// A path; in a value (not a type) generic arguments are written `::<…>`.
    mutating func path(inValue: Bool) -> String? {
        nested { parser in parser.pathBody(inValue: inValue) }
    }

    private mutating func pathBody(inValue: Bool) -> String? {
        guard let tag = next() else { return nil }
        switch tag {
        case UInt8(ascii: "C"):
            guard disambiguator() != nil else { return nil }
            return identifier()
        case UInt8(ascii: "M"):
            guard disambiguator() != nil, path(inValue: false) != nil, let type = type() else { return nil }
            return "<\(type)>"
        case UInt8(ascii: "X"):
            guard disambiguator() != nil, path(inValue: false) != nil, let type = type(), let trait = path(inValue: false) else { return nil }
            return "<\(type) as \(trait)>"
        case UInt8(ascii: "Y"):
            guard let type = type(), let trait = path(inValue: false) else { return nil }
            return "<\(type) as \(trait)>"
        case UInt8(ascii: "N"):
            guard let namespace = next(), let parent = path(inValue: inValue), let index = disambiguator(),
                  let name = identifier() else { return nil }
            if (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(namespace) { return "\(parent)::\(name)" }
            let kind = namespace == UInt8(ascii: "C") ? "closure" : namespace == UInt8(ascii: "S") ? "shim" : String(UnicodeScalar(namespace))
            return "\(parent)::{\(kind)\(name.isEmpty ? "" : ":" + name)#\(index)}"
        case UInt8(ascii: "I"):
            guard let base = path(inValue: inValue), let arguments = list({ $0.genericArgument() }) else { return nil }
            return base + (inValue ? "::<" : "<") + arguments.joined(separator: ", ") + ">"
        case UInt8(ascii: "B"):
            return backref { $0.pathBody(inValue: inValue) }
        default:
            return nil
        }
    }

    /// Items until `E`.
    private mutating func list(_ item: (inout V0Parser) -> String?) -> [String]? {
        var items: [String] = []
        while !eat("E") {
            guard let next = item(&self) else { return nil }
            items.append(next)
        }
        return items
    }

    private mutating func genericArgument() -> String? {
        if eat("L") { return base62().map { _ in "'_" } }
        if eat("K") { return constant() }
        return type()
    }

    private static let basicTypes: [UInt8: String] = Dictionary(uniqueKeysWithValues: [
        ("a", "i8"), ("b", "bool"), ("c", "char"), ("d", "f64"), ("e", "str"), ("f", "f32"), ("h", "u8"), ("i", "isize"),
        ("j", "usize"), ("l", "i32"), ("m", "u32"), ("n", "i128"), ("o", "u128"), ("s", "i16"), ("t", "u16"), ("u", "()"),
        ("v", "..."), ("x", "i64"), ("y", "u64"), ("z", "!"), ("p", "_"),
    ].map { (Character($0.0).asciiValue!, $0.1) })

    mutating func type() -> String? {
        nested { parser in parser.typeBody() }
    }

    private mutating func typeBody() -> String? {
        guard let tag = peek() else { return nil }
        if let basic = Self.basicTypes[tag] {
            position += 1
            return basic
        }
        switch tag {
        case UInt8(ascii: "A"):
            position += 1
            guard let element = type(), let length = constant() else { return nil }
            return "[\(element); \(length)]"
        case UInt8(ascii: "S"):
            position += 1
            return type().map { "[\($0)]" }
        case UInt8(ascii: "T"):
            position += 1
            guard let elements = list({ $0.type() }) else { return nil }
            return "(" + elements.joined(separator: ", ") + (elements.count == 1 ? ",)" : ")")
        case UInt8(ascii: "R"), UInt8(ascii: "Q"):
            position += 1
            if eat("L") { guard base62() != nil else { return nil } }
            return type().map { (tag == UInt8(ascii: "R") ? "&" : "&mut ") + $0 }
        case UInt8(ascii: "P"), UInt8(ascii: "O"):
            position += 1
            return type().map { (tag == UInt8(ascii: "P") ? "*const " : "*mut ") + $0 }
        case UInt8(ascii: "F"):
            position += 1
            return functionType()
        case UInt8(ascii: "D"):
            position += 1
            return dynamicTraits()
        case UInt8(ascii: "B"):
            position += 1
            return backref { $0.typeBody() }
        default:
            return path(inValue: false)
        }
    }

    /// `[G binder] [U] [K abi] {type} E type`.
    private mutating func functionType() -> String? {
        if eat("G") { guard base62() != nil else { return nil } }
        let unsafe = eat("U")
        var abi = ""
        if eat("K") {
            if eat("C") { abi = "extern \"C\" " } else if let name = identifier() { abi = "extern \"\(name.replacingUnderscores())\" " } else { return nil }
        }
        guard let parameters = list({ $0.type() }), let result = type() else { return nil }
        return (unsafe ? "unsafe " : "") + abi + "fn(" + parameters.joined(separator: ", ") + ")" + (result == "()" ? "" : " -> " + result)
    }

    /// `[G binder] {path {p name type}} E lifetime`.
    private mutating func dynamicTraits() -> String? {
        if eat("G") { guard base62() != nil else { return nil } }
        var traits: [String] = []
        while !eat("E") {
            guard var trait = path(inValue: false) else { return nil }
            var bindings: [String] = []
            while eat("p") {
                guard let name = identifier(), let type = type() else { return nil }
                bindings.append("\(name) = \(type)")
            }
            if !bindings.isEmpty {
                trait = trait.hasSuffix(">") ? String(trait.dropLast()) + ", " + bindings.joined(separator: ", ") + ">"
                    : trait + "<" + bindings.joined(separator: ", ") + ">"
            }
            traits.append(trait)
        }
        guard eat("L"), base62() != nil else { return nil }
        return "dyn " + traits.joined(separator: " + ")
    }

    /// `type [n] {hex} _`, `p` (a placeholder) or a back reference; shown as its value.
    private mutating func constant() -> String? {
        if eat("p") { return "_" }
        if eat("B") { return backref { $0.constant() } }
        guard let type = type() else { return nil }
        let negative = eat("n")
        var value: UInt64 = 0
        var digits = 0
        while let byte = next(), byte != UInt8(ascii: "_") {
            guard let digit = Int(String(UnicodeScalar(byte)), radix: 16), digits < 16 else { return nil }
            value = value << 4 | UInt64(digit)
            digits += 1
        }
        switch type {
        case "bool": return value == 0 ? "false" : "true"
        case "char": return Unicode.Scalar(UInt32(truncatingIfNeeded: value)).map { "'\(Character($0))'" }
        default: return (negative ? "-" : "") + String(value)
        }
    }
}

private extension String {
    /// An ABI name as mangled (`_` for `-`) as written.
    func replacingUnderscores() -> String { String(map { $0 == "_" ? "-" : $0 }) }
}
