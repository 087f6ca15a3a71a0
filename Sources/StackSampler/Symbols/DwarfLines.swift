import FileFormatLibraries
import Glibc

/// The DWARF of one module, through libdw: the source line of an address and the chain of
/// calls inlined there. Keeps its ELF file open for as long as it lives.
final class DwarfLines {
    /// What DWARF says about one address.
    struct Answer {
        /// The line in the real (outermost) function: the call site of the outermost inlined
        /// call, or the address's own line when nothing is inlined there.
        var location: SourceLocation?
        /// Inlined calls, outermost first, with names as DWARF records them (linkage names
        /// still mangled).
        var inlined: [InlinedFrame] = []
    }

    private let file: ElfFile
    private let libdw: ss_libdw
    private let dwarf: OpaquePointer

    /// The DWARF of `file`; nil when it has none (no `.debug_info`), or libdw is missing or cannot
    /// read it. libdw is loaded privately the first time (only runs that ask for lines get here).
    init?(file: ElfFile) {
        guard let libdw = ss_libdw_load()?.pointee, let dwarf = libdw.dwarf_begin_elf(file.elf, DWARF_C_READ, nil) else { return nil }
        self.file = file
        self.libdw = libdw
        self.dwarf = dwarf
    }

    deinit {
        _ = libdw.dwarf_end(dwarf)
    }

    /// The line and inlined calls at ELF virtual address `vaddr`; empty when no compile unit covers it.
    func answer(at vaddr: UInt64) -> Answer {
        var unit = Dwarf_Die()
        guard libdw.dwarf_addrdie(dwarf, vaddr, &unit) != nil else { return Answer() }
        var location = lineLocation(in: &unit, at: vaddr)
        var innermostFirst: [InlinedFrame] = []
        // As eu-addr2line -i does: the innermost scope from dwarf_getscopes, then its own
        // parents (dwarf_getscopes_die), which are the concrete inlined instances, not the
        // scopes of their abstract origins.
        var found: UnsafeMutablePointer<Dwarf_Die>?
        guard libdw.dwarf_getscopes(&unit, vaddr, &found) > 0, var innermost = found?.pointee else {
            free(found)
            return Answer(location: location)
        }
        free(found)
        var scopes: UnsafeMutablePointer<Dwarf_Die>?
        let depth = libdw.dwarf_getscopes_die(&innermost, &scopes)
        defer { free(scopes) }
        guard depth > 0, let scopes else { return Answer(location: location) }
        var files: OpaquePointer?
        if libdw.dwarf_getsrcfiles(&unit, &files, nil) != 0 { files = nil }
        for index in 0..<Int(depth) {
            let scope = scopes + index
            let tag = Int(libdw.dwarf_tag(scope))
            if tag == DW_TAG_subprogram || tag == DW_TAG_entry_point { break }
            guard tag == DW_TAG_inlined_subroutine else { continue }
            innermostFirst.append(InlinedFrame(name: name(of: scope) ?? "??", location: location))
            location = callSite(of: scope, files: files)
        }
        return Answer(location: location, inlined: innermostFirst.reversed())
    }

    /// The line table's row for `vaddr` in compile unit `unit`.
    private func lineLocation(in unit: UnsafeMutablePointer<Dwarf_Die>, at vaddr: UInt64) -> SourceLocation? {
        var number: Int32 = 0
        guard let line = libdw.dwarf_getsrc_die(unit, vaddr), let path = libdw.dwarf_linesrc(line, nil, nil),
              libdw.dwarf_lineno(line, &number) == 0, number > 0 else { return nil }
        return SourceLocation(file: String(cString: path), line: Int(number))
    }

    /// `DW_AT_call_file:DW_AT_call_line` of an inlined subroutine: where its caller calls it.
    private func callSite(of die: UnsafeMutablePointer<Dwarf_Die>, files: OpaquePointer?) -> SourceLocation? {
        var attribute = Dwarf_Attribute()
        var line: Dwarf_Word = 0, fileIndex: Dwarf_Word = 0
        guard libdw.dwarf_attr(die, UInt32(DW_AT_call_line), &attribute) != nil, libdw.dwarf_formudata(&attribute, &line) == 0, line > 0,
              libdw.dwarf_attr(die, UInt32(DW_AT_call_file), &attribute) != nil, libdw.dwarf_formudata(&attribute, &fileIndex) == 0,
              let files, let path = libdw.dwarf_filesrc(files, Int(fileIndex), nil, nil) else { return nil }
        return SourceLocation(file: String(cString: path), line: Int(line))
    }

    /// The linkage name of a function DIE, else its plain name, following `DW_AT_abstract_origin`
    /// and `DW_AT_specification`.
    private func name(of die: UnsafeMutablePointer<Dwarf_Die>) -> String? {
        var attribute = Dwarf_Attribute()
        for code in [DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name] {
            if libdw.dwarf_attr_integrate(die, UInt32(code), &attribute) != nil, let text = libdw.dwarf_formstring(&attribute) {
                return String(cString: text)
            }
        }
        return nil
    }
}
