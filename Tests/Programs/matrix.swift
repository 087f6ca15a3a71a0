// matrix: a Swift workload, to check Swift symbols come out demangled.
//
// Multiplies 200x200 matrices of doubles for argv[1] seconds (default 1.5) of wall time and
// prints a checksum. Nearly all the time is spent in `Matrix.multiply(_:)`.
//
// Build: swiftc -O -o matrix matrix.swift

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

let seconds = CommandLine.arguments.count > 1 ? Double(CommandLine.arguments[1]) ?? 1.5 : 1.5
let clock = ContinuousClock()
let deadline = clock.now + .milliseconds(Int(seconds * 1000))
let left = Matrix(size: 200, seed: 0.5)
var right = Matrix(size: 200, seed: 0.25)
var checksum = 0.0
var rounds = 0
while clock.now < deadline {
    let product = left.multiply(right)
    checksum += product.elements[rounds % product.elements.count]
    right.elements[rounds % right.elements.count] += 1e-3
    rounds += 1
}
print("rounds \(rounds)")
print("checksum \(checksum)")
