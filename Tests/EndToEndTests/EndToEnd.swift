import Testing

/// All end-to-end tests: real programs from Tests/Programs run under the release build of
/// StackSampler. Serialized, nested suites included, so that no two profiled programs compete
/// for the two cores and disturb each other's CPU shares.
///
/// The tests are extensions of this suite, one file per concern.
@Suite(.serialized)
struct EndToEnd {}
