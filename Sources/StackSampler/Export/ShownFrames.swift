/// A frame as the exporters show it: code at an address, or a marker frame the profile adds.
enum ShownFrame: Hashable, Sendable {
    /// Code at this address (a key of `Profile.frames`).
    case code(UInt)
    /// The per-process root `[name pid=N]`.
    case processRoot
    /// The per-thread root `[name tid=N]` of the thread at this index.
    case threadRoot(Int)
    /// `[truncated]`: the stack was cut at the maximum depth on the root side.
    case truncated
}

extension Profile {
    /// The frames of `stack` as exporters show them, root first: the process root when
    /// `options.processRoot`, the thread root when `options.perThreadRoots` and the thread is
    /// known, `[truncated]` when cut, then the code.
    func shownFrames(of stack: Stack, options: ExportOptions) -> [ShownFrame] {
        var frames: [ShownFrame] = []
        frames.reserveCapacity(stack.addresses.count + 3)
        if options.processRoot { frames.append(.processRoot) }
        if options.perThreadRoots, threads.indices.contains(stack.thread) { frames.append(.threadRoot(stack.thread)) }
        if stack.isTruncated { frames.append(.truncated) }
        for address in stack.addresses { frames.append(.code(address)) }
        return frames
    }

    /// The name of a shown frame: the symbol, `[name pid=N]`, `[name tid=N]` or `[truncated]`.
    func name(of frame: ShownFrame) -> String {
        switch frame {
        case .code(let address): name(of: address)
        case .processRoot: "[\(processName) pid=\(processID)]"
        case .threadRoot(let index): "[\(threads[index].name) tid=\(threads[index].id)]"
        case .truncated: "[truncated]"
        }
    }
}
