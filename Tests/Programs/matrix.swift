// matrix: a Swift workload, to check Swift symbols come out demangled, and the benchmarks'
// Swift workload.
//
// Multiplies square matrices of doubles (i-k-j order) and prints the rounds and a checksum.
// Nearly all the time is spent in `Matrix.multiply(_:)`.
//
//   matrix [SECONDS] [--rounds N] [--size N] [--leaf]
//
// SECONDS: multiply for that much wall time (default 1.5), for the tests. --rounds N: N rounds,
// a fixed amount of work, for the benchmarks (the run time under a profiler, divided by the run
// time without, is its slowdown). --size N: N x N matrices (default 200). --leaf: each round
// also sums the product in `leafSum`, a function that calls nothing, for which swiftc -O
// without -g writes no unwind info (about as long as the multiplication).
//
// Build: swiftc -O -o matrix matrix.swift

import Glibc

/// A square, dense, row-major matrix of doubles.
struct Matrix {
    /// Number of rows, and of columns.
    let size: Int
    /// The elements, row after row.
    var elements: [Double]

    /// A matrix whose elements are a simple function of their position and of `seed`.
    init(size: Int, seed: Double) {
        self.size = size
        elements = (0..<size * size).map { Double(($0 * 7 + 3) % 11) * 0.1 + seed }
    }

    /// A matrix with the given elements.
    init(size: Int, elements: [Double]) {
        self.size = size
        self.elements = elements
    }

    /// The matrix product `self × other` (i-k-j loop order, so the inner loop runs along rows).
    @inline(never)
    func multiply(_ other: Matrix) -> Matrix {
        var product = [Double](repeating: 0, count: size * size)
        for i in 0..<size {
            for k in 0..<size {
                let factor = elements[i * size + k]
                for j in 0..<size {
                    product[i * size + j] += factor * other.elements[k * size + j]
                }
            }
        }
        return Matrix(size: size, elements: product)
    }
}

/// What the command line asks: wall time or rounds, and the matrices' size.
struct Work {
    /// Seconds of wall time to multiply for, unless `rounds` is set.
    var seconds = 1.5
    /// How many rounds, when a fixed amount of work is asked for.
    var rounds: Int?
    /// Rows and columns of the matrices.
    var size = 200
    /// Whether each round also runs `leafSum`.
    var leaf = false

    /// Reads `[SECONDS] [--rounds N] [--size N] [--leaf]`; exits with status 2 and a message on anything else.
    init(arguments: [String]) {
        var rest = arguments.dropFirst()
        while let argument = rest.popFirst() {
            switch argument {
            case "--rounds": rounds = Self.count(rest.popFirst(), for: argument)
            case "--size": size = Self.count(rest.popFirst(), for: argument)
            case "--leaf": leaf = true
            default:
                guard let value = Double(argument), value >= 0 else { Self.fail("\(argument) is not a number of seconds") }
                seconds = value
            }
        }
    }

    /// `value` as a whole number of 1 or more, or exits naming `option`.
    private static func count(_ value: String?, for option: String) -> Int {
        guard let value, let count = Int(value), count >= 1 else { fail("\(option) wants a whole number, 1 or more") }
        return count
    }

    /// Says what is wrong on standard error and exits with status 2.
    private static func fail(_ message: String) -> Never {
        fputs("matrix: \(message) (usage: matrix [SECONDS] [--rounds N] [--size N] [--leaf])\n", stderr)
        exit(2)
    }
}

/// The sum of `values`, `passes` times over: a loop that calls nothing and cannot trap, which
/// swiftc -O marks as never unwinding, so without -g it writes no unwind info for it (`--leaf`).
@inline(never)
func leafSum(_ values: UnsafeBufferPointer<Double>, passes: Int) -> Double {
    guard let base = values.baseAddress else { return 0 }
    var sum = 0.0
    var pass = 0
    while pass < passes {
        var index = 0
        while index < values.count {
            sum += base[index]
            index &+= 1
        }
        pass &+= 1
    }
    return sum
}

let work = Work(arguments: CommandLine.arguments)
let clock = ContinuousClock()
let deadline = clock.now + .milliseconds(Int(work.seconds * 1000))
let left = Matrix(size: work.size, seed: 0.5)
var right = Matrix(size: work.size, seed: 0.25)
var checksum = 0.0
var rounds = 0
while work.rounds.map({ rounds < $0 }) ?? (clock.now < deadline) {
    let product = left.multiply(right)
    checksum += product.elements[rounds % product.elements.count]
    if work.leaf { checksum += product.elements.withUnsafeBufferPointer { leafSum($0, passes: work.size) } * 1e-12 }
    right.elements[rounds % right.elements.count] += 1e-3
    rounds += 1
}
print("rounds \(rounds)")
print("checksum \(checksum)")
