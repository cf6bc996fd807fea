import Logging
import StreakCore
import StreakStore

/// What every job runs with: the store, the configuration, "now", where to print and when to stop.
public struct Context: Sendable {
    public let store: any Store
    public let config: Config
    public let now: Instant
    public let zones: ZoneBook
    public let printer: Printer
    public let logger: Logger
    /// When the job began, on this process's monotonic clock (a run's time budget).
    public let started = ContinuousClock.now
    /// Asked to stop (the command line's: SIGTERM or SIGINT): a run claims nothing more, starts no
    /// delivery, records those in flight and exits 75.
    public let stop: StopToken

    public init(
        store: any Store, config: Config, now: Instant, zones: ZoneBook, printer: Printer,
        logger: Logger = Logger(label: "streakd", factory: { _ in SwiftLogNoOpLogHandler() }),
        stop: StopToken = StopToken()
    ) {
        self.store = store
        self.config = config
        self.now = now
        self.zones = zones
        self.printer = printer
        self.logger = logger
        self.stop = stop
        logger.debug("context", metadata: ["now": "\(now)", "config": "\(config.source ?? "built-in defaults")"])
    }

    /// A user who must exist.
    func user(_ id: String, in reader: some UserReading) throws -> User {
        if let problem = Validate.userID(id) {
            throw StreakdError.usage("\(quoted(id)) is not a user id; use \(problem)")
        }
        guard let user = try reader.user(id) else { throw StreakdError.unknownUser(id) }
        return user
    }

    func streakID(_ id: String, field: String = "--streak") throws -> String {
        if let problem = Validate.streakID(id) {
            throw StreakdError.usage("\(field): \(quoted(id)) is not a streak id; use \(problem)")
        }
        return id
    }

    /// Everything the engine needs about one (user, streak).
    /// `epochs`: the streak's settings epochs when the caller has them already.
    func history(
        of user: User, streak: String, in reader: some HistoryReading, epochs: [SettingsEpoch]? = nil
    ) throws -> StreakHistory {
        try history(
            of: reader.storedStreak(of: user, streak: streak), epochs: try epochs ?? reader.settingsEpochs(of: streak))
    }

    /// A stored streak as the engine takes it, with the streak's settings epochs.
    public func history(of stored: StoredStreak, epochs: [SettingsEpoch]) throws -> StreakHistory {
        let location = store.location
        func damaged(_ what: String) -> StoreError {
            StoreError(
                .damaged,
                "store \(location): \(stored.userID)/\(stored.streak): \(what); the store is damaged: see "
                    + "`streakd store check` and restore a backup")
        }
        // Instants outside `Instant.plausible` are values the store never writes.
        if let bad = stored.zones.first(where: { !Instant.plausible.contains($0.since) }) {
            throw damaged("a zone change at \(bad.since.seconds) s is not an instant from 1900 to 2199")
        }
        if let bad = stored.checkins.first(where: {
            !Instant.plausible.contains($0.instant) || !Instant.plausible.contains($0.storedAt)
        }) {
            throw damaged(
                "a check-in at \(bad.instant.seconds) s (stored \(bad.storedAt.seconds) s) is not an instant from 1900 to 2199"
            )
        }
        let zones = try stored.zones.map {
            ZoneChange(since: $0.since, zone: try self.zones.stored($0.zone, store: location))
        }
        guard !zones.isEmpty else { throw damaged("no zone stored") }
        var last = zones[zones.count - 1].zone  // check-ins are mostly in the latest zone: ask the book less
        let checkins = try stored.checkins.map {
            if $0.zone != last.identifier { last = try self.zones.stored($0.zone, store: location) }
            return CheckIn(instant: $0.instant, zone: last, id: $0.eventID, storedAt: $0.storedAt)
        }
        return StreakHistory(
            checkins: checkins, zones: zones, freezeEvents: stored.freezeEvents, epochs: epochs,
            settings: config.settings(for: stored.streak), backfillDays: config.backfillDays)
    }

    /// Notes the goal, leeway and rest days in force, so later changes apply only to dates not ended.
    func recordSettings(for streaks: Set<String>, in writer: some HistoryWriting) throws {
        for streak in streaks {
            let s = config.settings(for: streak)
            try writer.recordSettings(
                SettingsEpoch(since: now, goal: s.goal, leewayHours: s.leewayHours, restDays: s.restDays),
                streak: streak)
        }
    }

    /// The user's current zone.
    func currentZone(of user: User) throws -> Zone { try zones.stored(user.zone, store: store.location) }

    /// A local time with its offset, e.g. `2026-11-21T20:00:00+01:00`.
    func local(_ instant: Instant, in zone: Zone) -> String {
        RFC3339.format(instant, offset: zone.offset(at: instant))
    }
}
