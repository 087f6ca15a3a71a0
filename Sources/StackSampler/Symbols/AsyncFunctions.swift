/// Swift async functions as the async stacks need them: which partial functions make one async
/// function, and which frames of a stack are resume functions read from the async contexts.
extension SymbolizedFrame {
    /// What the partial functions of one Swift async function (one per await) have in common:
    /// module and full demangled name without the `(N) await resume partial function for `
    /// prefix. nil for other functions.
    var asyncFunctionKey: String? {
        let module = modulePath ?? ""
        if fullName.hasPrefix("("), let marker = fullName.lastRange(of: " resume partial function for ") {
            return module + "\u{0}" + fullName[marker.upperBound...]
        }
        return fullName.containsText(") async") ? module + "\u{0}" + fullName : nil
    }

    /// Whether the frame is a resume function from an async context: the engine stores those one
    /// past their entry (a return address never is: no call instruction is one byte long).
    var isAsyncResume: Bool {
        guard let moduleOffset, let functionStart else { return false }
        return moduleOffset == functionStart + 1
    }
}

enum AsyncFunctions {
    /// `addresses` (root first) without the resume frames that belong to the same async function
    /// as the frame they call. Where an async function hands its context register to a callee it
    /// is about to jump to, or takes its own back from one that returned, the context read is
    /// the callee's, whose resume function is the running function's: kept, it would show the
    /// function as its own caller. Dropping it never shows a caller the program lacks (in a real
    /// recursion, one level of it goes).
    static func withoutSelfResumes(_ addresses: [UInt], frames: [UInt: SymbolizedFrame]) -> [UInt] {
        var kept: [UInt] = []
        kept.reserveCapacity(addresses.count)
        for (index, address) in addresses.enumerated() {
            if index + 1 < addresses.count, let frame = frames[address], frame.isAsyncResume,
               let key = frame.asyncFunctionKey, frames[addresses[index + 1]]?.asyncFunctionKey == key {
                continue
            }
            kept.append(address)
        }
        return kept
    }
}
