#if canImport(Glibc)
    import Glibc
#endif

/// A moment on the monotonic clock by which something must be done (wall-clock jumps do not move it).
struct Deadline {
    let end: ContinuousClock.Instant
    /// What was allowed, for messages.
    let allowed: Duration

    init(after allowed: Duration) {
        self.allowed = allowed
        end = .now + allowed
    }

    var hasPassed: Bool { ContinuousClock.now >= end }

    /// What remains, in whole milliseconds for poll(2): rounded up, so a wait does not wake just
    /// before the end and spin.
    var remainingMilliseconds: Int32 {
        let left = ContinuousClock.now.duration(to: end)
        if left <= .zero { return 0 }
        let (seconds, attoseconds) = left.components
        let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: ms)
    }
}

/// Waits until `fd` is ready for `events` (POLLIN, POLLOUT) or the deadline passes.
/// Returns the ready events (errors and hang-ups count: libpq reads them), or nil when time is up.
func waitForSocket(_ fd: Int32, _ events: Int16, until deadline: Deadline) -> Int16? {
    var entry = pollfd(fd: fd, events: events, revents: 0)
    while true {
        let timeout = deadline.remainingMilliseconds
        let ready = poll(&entry, 1, timeout)
        if ready > 0 { return entry.revents }
        if ready == 0 {
            if deadline.hasPassed { return nil }
            continue
        }
        // EINTR (a signal): wait again for what remains. Anything else (EBADF, ENOMEM) is for
        // libpq to report when it next touches the socket.
        if errno != EINTR { return Int16(POLLERR) }
    }
}

/// A readable description of a duration for messages: "2 s", "0.5 s", "60 s".
func describe(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    if attoseconds == 0 { return "\(seconds) s" }
    let tenths = (seconds * 1000 + attoseconds / 1_000_000_000_000_000) / 100
    return tenths % 10 == 0 ? "\(tenths / 10) s" : "\(tenths / 10).\(tenths % 10) s"
}
