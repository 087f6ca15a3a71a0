// bench_matrix: a Swift workload with a fixed amount of work.
//
// argv[1] = rounds. Each round multiplies two 128x128 matrices of doubles (i-k-j order);
// nearly all the time is in `Matrix.multiply(_:)`. Prints the rounds and a checksum.
// Unlike Tests/Programs/matrix.swift (which runs for a fixed wall time) the work is fixed,
// so the run time under a profiler, divided by the run time without, is the slowdown.
//
// Build: swiftc -O -o bench_matrix bench_matrix.swift

/// A square, dense, row-major matrix of doubles.
struct Matrix {
    let size: Int
    var elements: [Double]

    init(size: Int, seed: Double) {
        self.size = size
        elements = (0..<size * size).map { Double(($0 * 7 + 3) % 11) * 0.1 + seed }
    }

    init(size: Int, elements: [Double]) {
        self.size = size
        self.elements = elements
    }

    /// The matrix product `self × other`.
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

let rounds = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 200 : 200
let left = Matrix(size: 128, seed: 0.5)
var right = Matrix(size: 128, seed: 0.25)
var checksum = 0.0
for round in 0..<rounds {
    let product = left.multiply(right)
    checksum += product.elements[round % product.elements.count]
    right.elements[round % right.elements.count] += 1e-3
}
print("rounds \(rounds)")
print("checksum \(checksum)")
