import Testing
@testable import StackSampler

extension SymbolTests {
    /// Expected names: rustc-demangle's alternate form (what Rust's panics and backtraces show);
    /// the symbols are rustc 1.95's, for `rs.rs` and the standard library.
    @Suite struct RustNaming {
        @Test("legacy Rust names lose their hash and decode their escapes", arguments: [
            ("_ZN2rs4main17h6af98f44df74ee35E", "rs::main"),
            ("_ZN2rs1S1m17h78dc920b190cfc19E", "rs::S::m"),
            ("_ZN50_$LT$$BP$mut$u20$T$u20$as$u20$core..fmt..Debug$GT$3fmt17h111111111111111aE", "<*mut T as core::fmt::Debug>::fmt"),
            ("_ZN4core3ptr13drop_in_place17h0123456789abcdefE.llvm.4711", "core::ptr::drop_in_place"),
        ])
        func legacy(symbol: String, name: String) {
            #expect(Demangler.demangle(symbol) == (name, .native))
        }

        @Test("v0 Rust names: paths, impls, generic arguments, closures, shims, back references", arguments: [
            ("_RINvCsbFYJioi4cCO_2rs4leafAlj2_EB2_", "rs::leaf::<[i32; 2]>"),
            ("_RINvCsbFYJioi4cCO_2rs4leafThcEEB2_", "rs::leaf::<(u8, char)>"),
            ("_RINvCsbFYJioi4cCO_2rs4leafReEB2_", "rs::leaf::<&str>"),
            ("_RINvMNtCsgEmfK2I1SDS_4core3stre18trim_start_matchesReECsgY6Mt91CT9J_14rustc_demangle",
             "<str>::trim_start_matches::<&str>"),
            ("_RNCNCNCNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal00s_0B9_",
             "std::rt::lang_start_internal::{closure#0}::{closure#0}::{closure#1}"),
            ("_RNSNvYNCNCNvNtNtCsjrHSEGnQ3l9_3std3sys9backtrace10__print_fmts_00INtNtNtCsgEmfK2I1SDS_4core3ops8function6FnOnceTRNtNtNtBe_12backtrace_rs9symbolize6SymbolEE9call_once6vtableBe_",
             "<std::sys::backtrace::_print_fmt::{closure#1}::{closure#0} as core::ops::function::FnOnce<(&std::backtrace_rs::symbolize::Symbol,)>>::call_once::{shim:vtable#0}"),
        ])
        func v0(symbol: String, name: String) {
            #expect(Demangler.demangle(symbol) == (name, .native))
        }

        @Test("C++ names and malformed Rust names are not taken for Rust", arguments: [
            "_ZN3foo3barEv", "_ZN2rs4main17h6af98f44df74ee3E", "_ZN17h6af98f44df74ee35E", "_RNvB9999_2rs", "_RINvCs_2rs",
        ])
        func notRust(symbol: String) {
            #expect(RustNames.demangle(symbol) == nil)
        }

        @Test("a v0 name whose back references loop is refused, not followed for ever")
        func cyclicBackReference() {
            #expect(RustNames.demangle("_RNvB_2rs") == nil)
            #expect(RustNames.demangle("_RIB_E") == nil)
        }
    }
}
