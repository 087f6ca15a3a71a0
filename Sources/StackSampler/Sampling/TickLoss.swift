/// Why a tick of a thread was counted lost (`WallScheduler.lostTicks`), as the summary names it.
enum TickLoss: String, Sendable {
    /// Asleep, in a sleep over before the sampler could walk it (or woken while walked).
    case sleepOverUnwalked = "sleep over before it was walked"
    /// Running or waiting for a core, with no sample of it within reach in CPU time.
    case noSampleNear = "no sample near in CPU time"
    /// Its switches unknown (records lost, or a thread that ended meanwhile without them).
    case placeUnknown = "place unknown"
    /// Between its attach and the opening of its ring.
    case notWatchedYet = "not watched yet"
    /// Gone when its CPU time was read.
    case threadGone = "thread gone"
    /// Ticks of a wake that planned several, of a thread whose switches are not known.
    case batchOfUnknownPlace = "batch of a thread without switches"
    /// A thread without switches that moved while it was walked.
    case movedWhileWalked = "moved while walked"
    /// More ticks waiting for a sample than are kept.
    case tooManyWaiting = "too many waiting"
    /// A thread without a ring that ended before the look its last ticks were left for (`LookSubsample`).
    case endedBeforeLook = "ended before its next look"

    /// Whether the thread may have been anywhere at these ticks, asleep in another call too: so
    /// the calls open before them cannot be said to go on after them. Not so for a thread that
    /// ran (or waited for a core) between two of its samples, with none near the tick: it ran
    /// code from one to the other, as between any two samples.
    var leavesPlaceUnknown: Bool {
        switch self {
        case .noSampleNear, .tooManyWaiting: false
        default: true
        }
    }
}
