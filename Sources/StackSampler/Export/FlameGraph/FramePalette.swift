/// Colours of flame graph boxes: one hue range per kind of code, a stable shade per name
/// (the same function has the same colour in every graph), and the red/blue scale of
/// differential graphs.
enum FramePalette {
    /// What a box shows, for its colour.
    enum Category: Sendable {
        case swift, cpp, native
        /// Unresolved addresses and kernel frames.
        case kernelOrUnknown
        /// StackSampler's own code.
        case profiler
        /// Frames the profile adds: `all`, thread roots, cut markers (`[truncated]`…), merged narrow frames.
        case marker
    }

    /// The category of `frame` of `profile`; an inlined call is coloured as the function it was inlined into.
    static func category(of frame: ShownFrame, in profile: Profile) -> Category {
        let address: UInt
        switch frame {
        case .code(let code), .inlined(let code, _): address = code
        case .processRoot, .threadRoot, .cut, .asyncTask: return .marker
        }
        guard let symbol = profile.frames[address] else { return .kernelOrUnknown }
        if isProfiler(symbol, modules: profile.profilerModules) { return .profiler }
        switch symbol.kind {
        case .swift: return .swift
        case .cpp: return .cpp
        case .native: return .native
        case .unknown: return .kernelOrUnknown
        }
    }

    /// Code of StackSampler itself: in one of its own `modules` (its preload libraries), or
    /// named after its Swift module or its C entry points (when it is linked into the program).
    private static func isProfiler(_ symbol: SymbolizedFrame, modules: Set<String>) -> Bool {
        if let path = symbol.modulePath, modules.contains(path) { return true }
        return symbol.name.hasPrefix("StackSampler.") || symbol.name.hasPrefix("stacksampler_")
    }

    /// `#rrggbb` for a box named `name` of `category`.
    static func colour(of name: String, category: Category) -> String {
        let hash = fnv1a(name)
        let shade = Double(hash & 0xffff) / 65535
        let tone = Double(hash >> 16 & 0xffff) / 65535
        let (hues, saturation, lightness): (ClosedRange<Double>, Double, ClosedRange<Double>) = switch category {
        case .native: (0...14, 0.78, 0.55...0.66)
        case .swift: (22...36, 0.85, 0.55...0.66)
        case .cpp: (46...60, 0.80, 0.52...0.62)
        case .kernelOrUnknown: (200...220, 0.08, 0.62...0.72)
        case .profiler: (265...290, 0.45, 0.62...0.72)
        case .marker: (205...215, 0.25, 0.74...0.80)
        }
        return hex(hue: hues.lowerBound + shade * (hues.upperBound - hues.lowerBound), saturation: saturation,
                   lightness: lightness.lowerBound + tone * (lightness.upperBound - lightness.lowerBound))
    }

    /// The colour of a box that did not change between the two profiles of a differential graph.
    static let unchanged = "#e8e8e8"

    /// Differential colour: red for growth, blue for shrinkage, `unchanged` for none;
    /// `change` is scaled to -1...1 (1 = the largest change in the graph).
    static func differentialColour(change: Double) -> String {
        guard abs(change) > 1e-12 else { return unchanged }
        let strength = 0.15 + 0.85 * min(1, abs(change))
        let fade = UInt8((232 * (1 - strength)).rounded())
        return change > 0 ? hexText(232, fade, fade) : hexText(fade, fade, 232)
    }

    /// 32-bit FNV-1a of the name's UTF-8 bytes.
    private static func fnv1a(_ text: String) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in text.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return hash
    }

    private static func hex(hue: Double, saturation: Double, lightness: Double) -> String {
        let chroma = (1 - abs(2 * lightness - 1)) * saturation
        let sector = hue / 60
        let second = chroma * (1 - abs(sector.truncatingRemainder(dividingBy: 2) - 1))
        let (r, g, b): (Double, Double, Double) = switch Int(sector) {
        case 0: (chroma, second, 0)
        case 1: (second, chroma, 0)
        case 2: (0, chroma, second)
        case 3: (0, second, chroma)
        case 4: (second, 0, chroma)
        default: (chroma, 0, second)
        }
        let base = lightness - chroma / 2
        func channel(_ value: Double) -> UInt8 { UInt8(max(0, min(255, ((value + base) * 255).rounded()))) }
        return hexText(channel(r), channel(g), channel(b))
    }

    private static func hexText(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        var text = "#"
        for value in [r, g, b] {
            text.append(digits[Int(value >> 4)])
            text.append(digits[Int(value & 15)])
        }
        return text
    }
}
