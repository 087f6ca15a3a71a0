import Glibc
import Testing
@testable import StackSampler

extension SymbolTests {
    /// Module tables read by one symbolizer (the sampler thread's, while the program runs) are
    /// handed to the next (the profile's, at exit) only when both read them the same way.
    @Suite struct TableReuse {
        /// An address inside libc's `strlen`, as this process maps it.
        static func libcAddress() throws -> UInt {
            let handle = try #require(dlopen(nil, RTLD_NOW))
            let symbol = try #require(dlsym(handle, "strlen"))
            return UInt(bitPattern: symbol) + 1
        }

        @Test("same options: the tables are reused, and name the address as the first did")
        func reusedWithSameOptions() throws {
            let address = try Self.libcAddress()
            let options = SymbolOptions()
            let first = Symbolizer(modules: .current(), options: options)
            let name = first.symbolize(address).name
            #expect(first.tableBytes > 0)
            let second = Symbolizer(modules: .current(), options: options, reusingTablesOf: first)
            #expect(second.tableBytes == first.tableBytes, "tables reused before any lookup")
            #expect(second.symbolize(address).name == name)
            #expect(second.tableBytes == first.tableBytes, "no table read again")
        }

        @Test("other options (source lines): nothing is reused")
        func notReusedWithOtherOptions() throws {
            let address = try Self.libcAddress()
            let first = Symbolizer(modules: .current(), options: SymbolOptions())
            _ = first.symbolize(address)
            let other = Symbolizer(modules: .current(), options: SymbolOptions(resolvesLines: true), reusingTablesOf: first)
            #expect(other.tableBytes == 0)
        }
    }
}
