/// One date's end, as the user lived it.
struct DayEnd {
    var date: LocalDate
    var at: Instant
    /// Skipped when a zone change moved "today" forward by more than one date.
    var bridged: Bool
}

/// Works out which dates have ended by an instant, and when, following the
/// user's zones over time (SPEC §1 "ended date").
struct DayEnds {
    let zones: [ZoneChange]
    let timeline: SettingsTimeline

    /// Seconds of leeway after the first instant of `date + 1` before `date` ends.
    func leeway(_ date: LocalDate, in zone: Zone) -> Int64 {
        Int64(timeline.at(zone.start(of: date + 1)).leewayHours) * Instant.hour
    }

    func end(of date: LocalDate, in zone: Zone) -> Instant {
        zone.start(of: date + 1) + leeway(date, in: zone)
    }

    /// The latest date that has ended at `t` in one zone.
    func latestEnded(at t: Instant, in zone: Zone) -> LocalDate {
        var d = zone.date(of: t) - 1
        while end(of: d, in: zone) > t { d = d - 1 }
        return d
    }

    /// Every date that ended after `start` and by `now`, in order, and "today" at `now`.
    func walk(from start: Instant, to now: Instant) -> (ends: [DayEnd], endedThrough: LocalDate, today: LocalDate) {
        var k = 0
        while k + 1 < zones.count && zones[k + 1].since <= start { k += 1 }
        var zone = zones[k].zone
        var ended = latestEnded(at: start, in: zone)
        var ends: [DayEnd] = []
        while true {
            let change: Instant? = k + 1 < zones.count ? zones[k + 1].since : nil
            let limit = min(change ?? now + 1, now + 1)
            while true {
                let at = end(of: ended + 1, in: zone)
                guard at < limit else { break }
                ended = ended + 1
                ends.append(DayEnd(date: ended, at: at, bridged: false))
            }
            guard let change, change <= now else { break }
            let oldToday = max(zone.date(of: change - 1), ended + 1)
            k += 1
            zone = zones[k].zone
            let endedNow = max(ended, latestEnded(at: change, in: zone))
            let newToday = max(zone.date(of: change), endedNow + 1)
            while ended < endedNow {
                ended = ended + 1
                ends.append(DayEnd(date: ended, at: change, bridged: ended > oldToday && ended < newToday))
            }
        }
        return (ends, ended, max(zone.date(of: now), ended + 1))
    }
}
