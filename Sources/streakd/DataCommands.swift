import ArgumentParser
import Foundation
import StreakJobs
import StreakStore

struct Checkin: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checkin", abstract: "Record a check-in.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The user's id.", completion: Completions.users) var id: String
    @Option(help: "The streak.", completion: Completions.streaks) var streak = "daily"
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "When it happened: RFC 3339, or as log --since takes it (\"yesterday 21:00\", \"2 hours ago\"; local times "
                + "in the check-in's zone); default now.", valueName: "time"))
    var at: String?
    @Option(
        help: ArgumentHelp("The zone in force when it happened; default the user's.", valueName: "zone"),
        completion: Completions.zones)
    var tz: String?
    @Option(
        name: .customLong("id"),
        help: ArgumentHelp("An event id; storing the same id again does nothing.", valueName: "event-id"))
    var eventID: String?
    @Option(
        help: ArgumentHelp("Metadata (repeatable); values are strings, true/false or integers.", valueName: "key=value")
    )
    var meta: [String] = []

    func run() throws {
        try global.run(.write, existing: true) {
            try $0.checkin(user: id, streak: streak, at: at, tz: tz, eventID: eventID, meta: meta)
        }
    }
}

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import check-ins from JSON lines or CSV; all or nothing.",
        discussion: """
            JSON lines: {"user":"u1","streak":"daily","at":"2026-11-20T19:03:00-05:00","tz":"America/New_York","id":"e1","meta":{"reps":20}} \
            (streak, tz, id and meta optional). CSV: a header row naming the columns user,at[,tz][,streak][,id]. \
            The format follows the file's extension (.csv), else JSON lines.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The file, or - for standard input.", completion: .file(extensions: ["jsonl", "csv"]))
    var file: String
    @Option(help: "jsonl or csv (default: from the file's extension).") var format: Context.ImportFormat?
    @Flag(help: "Import the valid records and report the invalid ones.") var skipInvalid = false

    func run() throws {
        try global.run(.write, existing: true) {
            try $0.importCheckins(path: file, format: format, skipInvalid: skipInvalid)
        }
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show a user's streaks, or without an ID an overview of the whole store.",
        discussion: """
            With an ID: current and longest streak, today's progress, freezes, the next refill and the next \
            reminder (or why there is none), per streak. Without: users and streaks, who is at risk tonight, \
            pending and dead deliveries, the last tick and refill, as systemctl status shows a unit.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The user's id (none: the overview).", completion: Completions.users) var id: String?
    @Option(help: "One streak (default: every streak of the user).", completion: Completions.streaks)
    var streak: String?
    @Flag(
        help: """
            Check the store's health instead: exit 1 with a line per problem (dead deliveries, deliveries \
            pending over an hour, no tick in 45 minutes, no refill in 26 hours), else 0.
            """)
    var check = false

    func run() throws {
        if check {
            if id != nil || streak != nil { throw StreakdError.usage("--check takes no user: streakd status --check") }
            var healthy = true
            try global.run(.read) { healthy = try $0.healthCommand() }
            if !healthy { throw ExitCode(1) }
        } else if let id {
            try global.run(.read) { try $0.status(user: id, streak: streak) }
        } else {
            if streak != nil { throw StreakdError.usage("--streak needs a user: streakd status ID --streak S") }
            try global.run(.read) { try $0.overview(store: $0.store.location) }
        }
    }
}

struct Badges: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "badges",
        abstract: "Show a user's badges: category, title, progress and when each was unlocked.",
        discussion: """
            Every badge of the configuration (the 12 defaults unless [[badges]] replaces them), grouped by \
            category, with the user's level and XP; on a terminal each has a bar of its progress.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The user's id.", completion: Completions.users) var id: String

    func run() throws {
        try global.run(.read) { try $0.badges(user: id) }
    }
}

struct Calendar: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calendar",
        abstract: "Show the last weeks as a grid: qualifying, frozen, missed.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The user's id.", completion: Completions.users) var id: String
    @Option(help: "The streak.", completion: Completions.streaks) var streak = "daily"
    @Option(parsing: .unconditional, help: "How many weeks.") var weeks = 4

    func run() throws { try global.run(.read) { try $0.calendar(user: id, streak: streak, weeks: weeks) } }
}

struct FreezeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "freeze", abstract: "Grant or use streak freezes.", subcommands: [Add.self, Use.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Grant a freeze (up to freeze.max).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The user's id.", completion: Completions.users) var id: String
        @Option(help: "The streak.", completion: Completions.streaks) var streak = "daily"
        func run() throws { try global.run(.write, existing: true) { try $0.addFreeze(user: id, streak: streak) } }
    }

    struct Use: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "use", abstract: "Freeze today or a coming date in advance.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The user's id.", completion: Completions.users) var id: String
        @Option(help: "The streak.", completion: Completions.streaks) var streak = "daily"
        @Option(help: ArgumentHelp("The date to freeze (default today).", valueName: "yyyy-mm-dd")) var date: String?
        func run() throws {
            try global.run(.write, existing: true) { try $0.useFreeze(user: id, streak: streak, date: date) }
        }
    }
}

struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Check the configuration.", subcommands: [Check.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Validate the configuration and print the effective one.")
        @OptionGroup var global: GlobalOptions
        func run() throws {
            do {
                try global.runWithoutStore { context in
                    try context.checkConfig(knownUsers: try global.storeUsers(for: context.config))
                }
            } catch let error as StreakdError where error.status == .config {
                // The file does not load: read it again as the check does, so that its programs,
                // files and desktop users are named beside the problems that stopped the loading.
                let path = global.config ?? Paths(environment: ProcessInfo.processInfo.environment).defaultConfig
                // The store is opened only for a file that may name desktop users.
                let desktop = (try? String(contentsOfFile: path, encoding: .utf8))?.contains("desktop") ?? false
                try ConfigLoader.check(path: path, knownUsers: desktop ? try? global.storeUsers(for: nil) : nil)
                throw error
            }
        }
    }
}
