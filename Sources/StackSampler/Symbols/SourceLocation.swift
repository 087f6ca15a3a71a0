/// A place in the source: a file and a line in it, from DWARF line tables.
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    /// The source file's path as the compiler recorded it (absolute when DWARF gives the compile directory).
    public var file: String
    /// 1-based line number.
    public var line: Int

    /// Creates a location.
    package init(file: String, line: Int) {
        self.file = file
        self.line = line
    }

    /// `file:line`.
    public var description: String { "\(file):\(line)" }
}

/// A function call the compiler inlined at a frame's address: shown as a frame of its own,
/// called by the frame (or by the inlined frame before it).
public struct InlinedFrame: Sendable, Hashable {
    /// The inlined function's name, demangled and made readable like symbol names; no `;`.
    public var name: String
    /// Where in the inlined function the address is: the call of the next inlined frame, or
    /// for the innermost one the address's own line.
    public var location: SourceLocation?

    /// Creates an inlined frame.
    package init(name: String, location: SourceLocation?) {
        self.name = name
        self.location = location
    }
}
