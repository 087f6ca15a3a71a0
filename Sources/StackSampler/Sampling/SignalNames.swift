import Glibc

/// Signal names as the summary shows them.
enum SignalNames {
    /// `SIGPROF`, `SIGALRM`, `SIGRTMIN+N`, else `signal N`.
    static func name(of signo: Int32) -> String {
        switch signo {
        case SIGPROF: "SIGPROF"
        case SIGALRM: "SIGALRM"
        default: signo >= __libc_current_sigrtmin() ? "SIGRTMIN+\(signo - __libc_current_sigrtmin())" : "signal \(signo)"
        }
    }
}
