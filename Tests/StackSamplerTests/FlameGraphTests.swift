import Foundation
import Testing
@testable import StackSampler
import TestSupport

/// Collapsed stacks with known totals: 10 samples, `main` with two children and a deeper path.
private let smallStacks = """
    main;parse;lex 3
    main;parse 1
    main;render<&>"quoted" 4
    idle 2
    """

private func profile(_ text: String, command: String = "app --flag") throws -> Profile {
    try Profile(collapsedStacks: text, command: command)
}

@Suite struct FlameGraphTests {
    @Test("the SVG parses as XML with the command as title, a script, a box per frame with escaped names, and the root's children summing to the samples")
    func parsesAsXMLWithTitleScriptAndBoxesThatSumToTheSampleCount() throws {
        let input = try profile(smallStacks)
        let document = try FlameGraphDocument(input.rendered(as: .svg))
        #expect(document.hasScript)
        #expect(document.title == "app --flag")
        #expect(document.subtitle.contains("\(input.sampleCount) samples"))
        let root = try #require(document.root)
        #expect(root.samples == input.sampleCount)
        let children = document.children(ofRoot: root, icicle: false)
        #expect(Set(children.map(\.name)) == ["main", "idle"])
        #expect(children.compactMap(\.samples).reduce(0, +) == input.sampleCount)
        let names = document.boxes.map(\.name)
        #expect(names.sorted() == ["all", "idle", "lex", "main", "parse", "render<&>\"quoted\""])
    }

    @Test("each box is as wide as its share of the samples and lies within its caller's width, a callee drawn above it")
    func boxWidthsAreProportionalToSamplesAndChildrenSitInsideParents() throws {
        let document = try FlameGraphDocument(profile(smallStacks).rendered(as: .svg))
        let root = try #require(document.root)
        for box in document.boxes {
            let samples = try #require(box.samples, "no sample count in \(box.tooltip)")
            #expect(abs(box.width - root.width * Double(samples) / 10) < 0.02, "\(box.tooltip): width \(box.width)")
            #expect(box.x >= root.x - 0.01 && box.x + box.width <= root.x + root.width + 0.01)
        }
        let main = try #require(document.boxes.first { $0.name == "main" })
        let parse = try #require(document.boxes.first { $0.name == "parse" })
        #expect(parse.y < main.y, "a callee is drawn above its caller")
        #expect(parse.x >= main.x && parse.x + parse.width <= main.x + main.width + 0.01)
    }

    @Test("an icicle graph draws the root at the top, its children below it")
    func icicleDrawsTheRootAtTheTop() throws {
        let document = try FlameGraphDocument(profile(smallStacks).rendered(as: .svg, options: ExportOptions(icicle: true)))
        let root = try #require(document.root)
        #expect(document.boxes.allSatisfy { $0.y >= root.y })
        #expect(document.children(ofRoot: root, icicle: true).count == 2)
    }

    @Test("3000 narrow frames are merged into one box with their samples, and the boxes above their caller still add up to all samples")
    func narrowFramesAreMergedAndTheTotalsStillAddUp() throws {
        var lines = ["main;hot 100000"]
        for index in 0..<3000 { lines.append("main;cold_\(index) 1") }
        let input = try profile(lines.joined(separator: "\n"))
        let document = try FlameGraphDocument(input.rendered(as: .svg))
        #expect(document.boxes.count < 10, "\(document.boxes.count) boxes for 3002 frames")
        let merged = try #require(document.boxes.first { $0.name.hasSuffix("narrow frames merged]") })
        #expect(merged.name == "[3000 narrow frames merged]")
        #expect(merged.samples == 3000)
        let main = try #require(document.boxes.first { $0.name == "main" })
        let aboveMain = document.boxes.filter { abs($0.y - (main.y - 16)) < 0.01 }
        #expect(aboveMain.compactMap(\.samples).reduce(0, +) == input.sampleCount)
    }

    @Test("a label too long for its box is cut or left out; one that fits is written whole")
    func labelsAreCutToTheBoxWidth() throws {
        let document = try FlameGraphDocument(profile("a_very_long_function_name_indeed 1\nb 99").rendered(as: .svg))
        let long = try #require(document.boxes.first { $0.name == "a_very_long_function_name_indeed" })
        #expect(long.label == nil || long.label!.count * 7 <= Int(long.width), "label \(long.label ?? "") in \(long.width) px")
        let wide = try #require(document.boxes.first { $0.name == "b" })
        #expect(wide.label == "b")
    }

    @Test("native, C++, Swift and unknown frames get hues of their own, and a name gets the same colour in every graph")
    func coloursFollowTheKindOfCodeAndStayStablePerName() throws {
        let first = try FlameGraphDocument(profile("main;std::vector<int>::push_back 5\nmain;Matrix.multiply(_:) 5\nmain;[unknown] 5").rendered(as: .svg))
        let second = try FlameGraphDocument(profile("other;main 7\nother;main;Matrix.multiply(_:) 1").rendered(as: .svg))
        func fill(_ name: String, in document: FlameGraphDocument) throws -> String {
            try #require(document.boxes.first { $0.name == name }?.fill)
        }
        #expect(try fill("main", in: first) == fill("main", in: second))
        #expect(try fill("Matrix.multiply(_:)", in: first) == fill("Matrix.multiply(_:)", in: second))
        let hues = try ["main", "std::vector<int>::push_back", "Matrix.multiply(_:)", "[unknown]"].map { try hue(of: fill($0, in: first)) }
        #expect(Set(hues.map { Int($0 / 10) }).count == 4, "native, C++, Swift and unknown share a hue band: \(hues)")
    }

    @Test("frames in the profiler's own modules are drawn in the profiler's colour, the program's in their own")
    func framesInTheProfilersOwnModulesAreItsColour() {
        var profile = handMadeProfile()
        let libz = ShownFrame.code(0x40), parse = ShownFrame.code(0x20)
        #expect(FramePalette.category(of: libz, in: profile) == .kernelOrUnknown)
        profile.profilerModules = ["/lib/libz.so.1"]
        #expect(FramePalette.category(of: libz, in: profile) == .profiler)
        #expect(FramePalette.category(of: parse, in: profile) == .native)
    }

    @Test("a differential graph of a profile against itself colours every box as unchanged")
    func differentialGraphOfIdenticalProfilesIsNeutral() throws {
        let input = try profile(smallStacks)
        let document = try FlameGraphDocument(input.differentialFlameGraph(against: input))
        #expect(document.boxes.count == 6)
        #expect(document.boxes.allSatisfy { $0.fill == FramePalette.unchanged }, "\(document.boxes.map(\.fill))")
    }

    @Test("a differential graph is red where a frame's share grew, blue where it shrank, neutral where it held")
    func differentialGraphIsRedWhereAShareGrewAndBlueWhereItShrank() throws {
        let before = try profile("main;parse 50\nmain;render 50")
        let after = try profile("main;parse 300\nmain;render 100")  // parse 50% → 75%, render 50% → 25%
        let document = try FlameGraphDocument(after.differentialFlameGraph(against: before))
        let parse = try rgb(#require(document.boxes.first { $0.name == "parse" }?.fill))
        let render = try rgb(#require(document.boxes.first { $0.name == "render" }?.fill))
        #expect(parse.red > parse.blue)
        #expect(render.blue > render.red)
        #expect(try #require(document.boxes.first { $0.name == "main" }?.fill) == FramePalette.unchanged)
    }
}

/// Red, green and blue of `#rrggbb`.
private func rgb(_ hex: String) throws -> (red: Double, green: Double, blue: Double) {
    let value = try #require(UInt32(hex.dropFirst(), radix: 16), "\(hex) is not #rrggbb")
    return (Double(value >> 16) / 255, Double(value >> 8 & 0xff) / 255, Double(value & 0xff) / 255)
}

/// The hue of `#rrggbb` in degrees.
private func hue(of hex: String) throws -> Double {
    let (r, g, b) = try rgb(hex)
    let high = max(r, g, b), low = min(r, g, b)
    guard high > low else { return 0 }
    let hue: Double = switch high {
    case r: 60 * ((g - b) / (high - low)).truncatingRemainder(dividingBy: 6)
    case g: 60 * ((b - r) / (high - low) + 2)
    default: 60 * ((r - g) / (high - low) + 4)
    }
    return hue < 0 ? hue + 360 : hue
}
