/// Where the symbolizer looks for names and how it presents them.
public struct SymbolOptions: Sendable, Hashable {
    /// Root of separate debug files (Debian's `-dbgsym` packages install under `/usr/lib/debug`):
    /// `ROOT/.build-id/xx/yyyy.debug` by build id, and `ROOT/DIR/NAME` for a module in `DIR`
    /// whose `.gnu_debuglink` names `NAME`.
    public var debugRoot: String
    /// Name generic and function-signature specializations of Swift functions apart
    /// (`specialized largest<A>(_:)`) instead of as the function they specialize.
    public var keepsSpecializations: Bool
    /// Read DWARF (the module's own or its separate debug file's) for each address's source
    /// line and the calls inlined there (`SymbolizedFrame.location` and `.inlined`).
    public var resolvesLines: Bool

    /// Creates options; by default debug files are looked up under `/usr/lib/debug`,
    /// specializations are folded into their function, and source lines are not read.
    public init(debugRoot: String = "/usr/lib/debug", keepsSpecializations: Bool = false, resolvesLines: Bool = false) {
        self.debugRoot = debugRoot
        self.keepsSpecializations = keepsSpecializations
        self.resolvesLines = resolvesLines
    }
}
