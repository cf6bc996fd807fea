/// A streak's rest days, pauses and repairs as the engine asks about them (SPEC §14): which
/// dates are bridged (neither missed nor counted) and which breaks are mended.
struct Forgiveness {
    let pauses: [DateSpan]
    /// Repairs recorded by the evaluation instant, in instant order.
    let repairs: [(at: Instant, span: DateSpan)]
    /// Dates skipped by travel (SPEC §1).
    private let travel: Set<LocalDate>
    /// The rest days when one set of settings covers the whole history (nearly always).
    private let restDays: RestDays?
    private let days: DayEnds
    private let history: StreakHistory

    init(_ history: StreakHistory, days: DayEnds, walk: [DayEnd], now: Instant) {
        self.pauses = history.pauses
        self.repairs = history.repairs.filter {
            $0.at <= now && LocalDate.plausible.contains($0.span.from) && LocalDate.plausible.contains($0.span.until)
                && $0.span.count <= 400
        }
        // Only a zone change skips dates: most histories have one zone, and no set to make.
        self.travel = history.zones.count > 1 ? Set(walk.lazy.filter(\.bridged).map(\.date)) : []
        self.restDays = days.timeline.epochs.count == 1 ? days.timeline.epochs[0].restDays : nil
        self.days = days
        self.history = history
    }

    func paused(_ d: LocalDate) -> Bool { !pauses.isEmpty && pauses.contains { $0.contains(d) } }

    /// A rest day by the settings in force when `d` was due to end.
    func rests(_ d: LocalDate) -> Bool {
        if let restDays { return !restDays.isEmpty && restDays.contains(d) }
        return Engine.epoch(for: d, days: days, history: history).restDays.contains(d)
    }

    func restsOrPaused(_ d: LocalDate) -> Bool { rests(d) || paused(d) }

    /// Rest, pause or travel: a date leeway never moves a check-in onto.
    func bridged(_ d: LocalDate) -> Bool { restsOrPaused(d) || (!travel.isEmpty && travel.contains(d)) }
}
