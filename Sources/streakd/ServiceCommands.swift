import ArgumentParser
import CMalloc
import StreakCore
import StreakJobs
import StreakStore

struct Tick: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tick",
        abstract: "The timer's job: settle ended dates, send due reminders, retry pending deliveries.",
        discussion: """
            Prints one record per notification it records (sent or expired) and a summary on standard \
            error. Exits 75 when deliveries are left pending for the next run.
            """)
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Show what would be sent or recorded; change nothing and send nothing.") var dryRun = false

    func run() throws {
        try global.run(dryRun ? .read : .write) { context in
            // SIGTERM (systemd stopping the unit) and SIGINT stop the run: exit 75 (SPEC §5).
            StopSignals.install()
            try context.tickCommand(dryRun: dryRun)
        }
    }
}

struct Preview: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview",
        abstract: "Show every notification due after now and by --until, assuming no new check-ins.")
    @OptionGroup var global: GlobalOptions
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "A duration after now (90m, 24h, 2d, 1w) or an RFC 3339 instant.", valueName: "duration|rfc3339"))
    var until: String?
    @Option(help: ArgumentHelp("Only this user.", valueName: "id"), completion: Completions.users) var user: String?
    @Option(
        help: ArgumentHelp("Only this kind: \(NotificationKind.names).", valueName: "kind"),
        completion: .list(NotificationKind.allCases.map(\.rawValue)))
    var kind: String?

    func run() throws {
        // Preview plans on a thread per core (or reads a PostgreSQL COPY on one) beside the
        // printing thread, all allocating as they go: malloc's one arena of `Streakd.main`, locked
        // by each in turn, cost a quarter of the CPU at a million users (1.24 s against 0.93 s
        // wall on two cores). An arena per thread, up to eight: glibc adds one only when a thread
        // finds the others' locked.
        mallopt(M_ARENA_MAX, 8)
        // What the printing thread frees (the planning threads' batches) stays with malloc for
        // their next ones: given back to the kernel at once, it came back as fresh pages to fault
        // in (4 % of the wall time, 17 MB more at the peak).
        mallopt(M_TRIM_THRESHOLD, 256 << 20)
        mallopt(M_MMAP_THRESHOLD, 32 << 20)
        // And each thread's heap grows 16 MB at a time: by the default 128 KB, four thousand
        // mprotect calls.
        mallopt(M_TOP_PAD, 16 << 20)
        try global.run(.read) { try $0.preview(until: until, user: user, kind: kind) }
    }
}

struct Refill: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refill",
        abstract: "The daily refill job: one freeze more, up to the maximum, every 30 days.")
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Show what would be refilled; change nothing and send nothing.") var dryRun = false

    func run() throws {
        try global.run(dryRun ? .read : .write) { context in
            StopSignals.install()  // as tick's
            try context.refillCommand(dryRun: dryRun)
        }
    }
}

struct Metrics: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metrics",
        abstract: "Print the store's metrics in Prometheus's text format.",
        discussion: """
            Notifications by kind and outcome, deliveries by sink and state, users, streaks, and when the \
            last tick and refill succeeded and how long they took. [metrics] textfile in streakd.toml makes \
            every tick and refill write the same text to a file (for node_exporter's textfile collector).
            """)
    @OptionGroup var global: GlobalOptions
    @Flag(help: "OpenMetrics 1.0 instead (what serve answers when asked), ending with # EOF.") var openmetrics = false

    func run() throws {
        try global.run(.read) { try $0.metricsCommand(openMetrics: openmetrics) }
    }
}
