/// A frame as the exporters show it: code at an address, or a marker frame the profile adds.
enum ShownFrame: Hashable, Sendable {
    /// Code at this address (a key of `Profile.frames`): the function its symbol names.
    case code(UInt)
    /// Call number `index` (outermost first) of those inlined at this address
    /// (`SymbolizedFrame.inlined`): a frame between the function and the next address.
    case inlined(UInt, index: Int)
    /// The per-process root `[name pid=N]` of the thread at this index.
    case processRoot(Int)
    /// The per-thread root `[name tid=N]` of the thread at this index.
    case threadRoot(Int)
    /// The marker of a stack that stops short of its thread's first frame (`Profile.StackCut`):
    /// `[truncated]`, `[no unwind info]`, `[leaf only]` or `[unwind fault]`.
    case cut(Profile.StackCut)
    /// `[async]`: the frames after it are a Swift task's async callers, read from its async
    /// contexts, then the running code (see `AsyncFunctions`).
    case asyncTask
}

extension Profile {
    /// The frames of `stack` as exporters show them, root first: the process root when
    /// `options.processRoot`, the thread root when `options.perThreadRoots` and the thread is
    /// known, the cut's marker when the stack stops short of the thread's first frame, `[async]`
    /// when the stack starts with a Swift task's async callers, then the code: each address's
    /// function followed by the calls inlined at it, outermost first. Stacks reversed
    /// (`stacksAreLeafFirst`) show the cut's marker last, after the outermost frame.
    func shownFrames(of stack: Stack, options: ExportOptions) -> [ShownFrame] {
        var frames: [ShownFrame] = []
        frames.reserveCapacity(stack.addresses.count + 3)
        if options.processRoot { frames.append(.processRoot(stack.thread)) }
        if options.perThreadRoots, threads.indices.contains(stack.thread) { frames.append(.threadRoot(stack.thread)) }
        if let cut = stack.cut, !stacksAreLeafFirst { frames.append(.cut(cut)) }
        if let root = stack.addresses.first, self.frames[root]?.isAsyncResume == true { frames.append(.asyncTask) }
        for address in stack.addresses {
            frames.append(.code(address))
            if let inlined = self.frames[address]?.inlined {
                for index in inlined.indices { frames.append(.inlined(address, index: index)) }
            }
        }
        if let cut = stack.cut, stacksAreLeafFirst { frames.append(.cut(cut)) }
        return frames
    }

    /// The name of a shown frame: the symbol, an inlined function with FlameGraph's `_[i]`
    /// suffix, `[name pid=N]`, `[name tid=N]`, a cut's marker or `[async]`.
    func name(of frame: ShownFrame) -> String {
        switch frame {
        case .code(let address): name(of: address)
        case .inlined: functionName(of: frame) + "_[i]"
        case .processRoot(let thread):
            threads.indices.contains(thread) ? "[\(threads[thread].processName) pid=\(threads[thread].processID)]" : "[\(processName) pid=\(processID)]"
        case .threadRoot(let index): "[\(threads[index].name) tid=\(threads[index].id)]"
        case .cut(let cut): cut.marker
        case .asyncTask: "[async]"
        }
    }

    /// The name of a shown frame's function, without the `_[i]` of inlined calls (for formats
    /// that mark inlining otherwise, as pprof does).
    func functionName(of frame: ShownFrame) -> String {
        guard case .inlined(let address, let index) = frame else { return name(of: frame) }
        return frames[address]?.inlined[index].name ?? "[unknown]"
    }

    /// The source location of a shown frame, when source lines were resolved: where in its
    /// function the frame is (for a function with inlined calls, the outermost call).
    func location(of frame: ShownFrame) -> SourceLocation? {
        switch frame {
        case .code(let address): frames[address]?.location
        case .inlined(let address, let index): frames[address]?.inlined[index].location
        case .processRoot, .threadRoot, .cut, .asyncTask: nil
        }
    }
}

extension Profile.StackCut {
    /// The frame that stands for the missing callers, on the root side of the stack.
    var marker: String {
        switch self {
        case .depth: "[truncated]"
        case .noUnwindInfo: "[no unwind info]"
        case .leafOnly: "[leaf only]"
        case .fault: "[unwind fault]"
        }
    }
}
