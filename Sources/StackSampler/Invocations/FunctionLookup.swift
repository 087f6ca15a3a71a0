/// What invocation tracking needs to know of code addresses. The sampler thread answers from
/// the ELF symbols (`SymbolLookup`); tests inject synthetic answers.
protocol FunctionLookup {
    /// The start of the function containing `address` (the leaf PC, or a return address − 1).
    mutating func functionStart(of address: UInt) -> UInt
    /// The name of the function containing `address`, for the function pattern.
    mutating func name(of address: UInt) -> String
}
