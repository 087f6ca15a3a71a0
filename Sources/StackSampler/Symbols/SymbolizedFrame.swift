/// What kind of code a frame is, for colouring flame graphs.
public enum FrameKind: String, Sendable {
    /// A Swift function (mangled name starting with `$s`, `_$s` or `$S`).
    case swift
    /// A C++ function (Itanium mangled name starting with `_Z`).
    case cpp
    /// Any other named symbol (C, assembly, unmangled).
    case native
    /// An address that could not be resolved to a symbol.
    case unknown
}

/// A resolved code address.
public struct SymbolizedFrame: Sendable, Hashable {
    /// Demangled function name without `+offset`; `NAME@plt` in a procedure linkage table entry.
    /// An address no symbol covers is named after
    /// the function that the module's unwind data places it in, `basename+0xSTART` (START = the
    /// function's first ELF vaddr), or `basename+0xOFFSET` (its own vaddr) outside every
    /// function; `[vdso]+0xOFFSET` / `[anon]+0xADDRESS`
    /// for executable mappings without a file (the vDSO resolves through its in-memory symbol
    /// table), `[unknown]` when no mapping contains it.
    /// Swift names are in a readable form (`Matrix.multiply(_:)`, see `fullName`).
    /// Never contains `;` (replaced by `:` for the folded format).
    public var name: String
    /// The complete demangled name (with module qualifiers, argument and return types,
    /// specializations); the same as `name` for everything but Swift symbols. No `;` either.
    public var fullName: String
    /// Path of the module containing the address (`[vdso]` for the vDSO), if any.
    public var modulePath: String?
    /// Address relative to the module's load bias, i.e. the ELF virtual address.
    public var moduleOffset: UInt?
    /// ELF virtual address where the containing function starts (its symbol's value, or its
    /// unwind data range's start), if known.
    public var functionStart: UInt?
    /// Kind of code, for colouring.
    public var kind: FrameKind
    /// True when the address was matched to a symbol.
    public var isResolved: Bool
    /// Where in this function the address is: its own line or, when calls were inlined there,
    /// the line of the outermost inlined call. Only when source lines were asked for and the
    /// module has DWARF.
    public var location: SourceLocation?
    /// Calls inlined at the address, outermost first (the last one is where the code is);
    /// empty unless source lines were asked for and the module has DWARF.
    public var inlined: [InlinedFrame] = []

    /// Creates a frame from its parts.
    package init(name: String, modulePath: String?, moduleOffset: UInt?, functionStart: UInt? = nil, kind: FrameKind, isResolved: Bool) {
        self.name = name
        self.fullName = name
        self.modulePath = modulePath
        self.moduleOffset = moduleOffset
        self.functionStart = functionStart
        self.kind = kind
        self.isResolved = isResolved
    }
}
