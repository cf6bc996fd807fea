import StreakCore

/// Planned runs as a store reads them from its queue (`ScheduleReading.eachPlannedRun`), a batch
/// of plain values: each run's place in the queue, its streak as `dueStreaks` lists it, and what
/// it carries for planning (its user's reminder settings and language, and the packed history,
/// as the run that planned it read them). Their texts and histories lie end to end in one
/// buffer (`PackedTexts`): a reader of a million runs makes no value per run.
public struct PlannedRuns: Sendable {
    /// One run's numbers; its texts are `user(_:)`, `streak(_:)`, `language(_:)`, `history(_:)`.
    public struct Run: Sendable {
        public var position: RunPosition
        public var version: Int
        /// The `now` of the last run that handled the streak.
        public var handledThrough: Instant?
        /// The user's reminder time (seconds after local midnight) and whether they get
        /// reminders, when the run carries its history.
        public var remindAt: Int
        public var remind: Bool

        public init(position: RunPosition, version: Int, handledThrough: Instant?, remindAt: Int, remind: Bool) {
            self.position = position
            self.version = version
            self.handledThrough = handledThrough
            self.remindAt = remindAt
            self.remind = remind
        }
    }

    public private(set) var runs: [Run] = []
    /// Four texts a run: user id, streak id, language (absent: the default), packed history
    /// (absent: the run carries nothing, and a reader asks `dueHistories`).
    public private(set) var texts = PackedTexts()

    public init() {}

    public var count: Int { runs.count }
    public var isEmpty: Bool { runs.isEmpty }
    /// The last run's place in the queue.
    public var last: RunPosition? { runs.last?.position }

    /// Appends a run with its texts as UTF-8 (`history`: the packed history it carries, if any).
    public mutating func append(
        _ run: Run, user: UnsafeBufferPointer<UInt8>, streak: UnsafeBufferPointer<UInt8>,
        language: UnsafeBufferPointer<UInt8>?, history: UnsafeBufferPointer<UInt8>?
    ) {
        runs.append(run)
        texts.append(user)
        texts.append(streak)
        texts.append(language)
        texts.append(history)
    }

    /// The same, its texts as values (a test's store, or a run read some other way).
    public mutating func append(_ run: Run, user: String, streak: String, language: String?, history: [UInt8]?) {
        var (user, streak) = (user, streak)
        user.withUTF8 { u in
            streak.withUTF8 { s in
                func with(_ l: UnsafeBufferPointer<UInt8>?) {
                    guard let history else { return append(run, user: u, streak: s, language: l, history: nil) }
                    history.withUnsafeBufferPointer { append(run, user: u, streak: s, language: l, history: $0) }
                }
                guard var language else { return with(nil) }
                language.withUTF8 { with($0) }
            }
        }
    }

    /// Where run `i`'s texts are in `texts.bytes` (nil: absent).
    public func user(_ i: Int) -> Range<Int> { texts.range(4 * i)! }
    public func streak(_ i: Int) -> Range<Int> { texts.range(4 * i + 1)! }
    public func language(_ i: Int) -> Range<Int>? { texts.range(4 * i + 2) }
    public func history(_ i: Int) -> Range<Int>? { texts.range(4 * i + 3) }

    /// Run `i` as `dueStreaks` would list it.
    public func dueStreak(_ i: Int) -> DueStreak {
        let run = runs[i]
        return DueStreak(
            user: texts.string(4 * i)!, streak: texts.string(4 * i + 1)!, handledThrough: run.handledThrough,
            version: run.version, row: run.position.row, marked: false)
    }

    /// Empties it, keeping its room for the next batch.
    public mutating func removeAll() {
        runs.removeAll(keepingCapacity: true)
        texts.removeAll()
    }
}

/// A place in the queue of planned runs: a run's instant, then its schedule row.
public struct RunPosition: Comparable, Sendable {
    public var at: Instant
    public var row: Int64

    public init(at: Instant, row: Int64) {
        self.at = at
        self.row = row
    }

    public static func < (a: RunPosition, b: RunPosition) -> Bool { (a.at, a.row) < (b.at, b.row) }
}

/// How a store hands the queue over: a small first batch, so a reader's first results come at
/// once, then larger ones.
public enum PlannedRunBatches {
    public static let first = 256
    public static let most = 8192

    /// The size of the batch after one of `size`.
    public static func next(after size: Int) -> Int { min(2 * size, most) }
}
