import ArgumentParser
import Foundation
import StreakJobs
import StreakStore

/// Who records a pause, a resume or a repair from the command line: the login name.
func loginName() -> String {
    if let name = ProcessInfo.processInfo.environment["LOGNAME"] ?? ProcessInfo.processInfo.environment["USER"],
        !name.isEmpty, name.utf8.count <= 128
    {
        return name
    }
    return ProcessInfo.processInfo.userName
}

struct Pause: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Pause a streak (or all of a user's streaks) over planned dates: bridged, no reminders.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The user's id.", completion: Completions.users) var id: String
    @Option(help: "The streak (default daily).", completion: Completions.streaks) var streak: String?
    @Flag(help: "Every streak of the user.") var all = false
    @Option(help: ArgumentHelp("The first paused date (today or up to a year ahead).", valueName: "yyyy-mm-dd"))
    var from: String
    @Option(help: ArgumentHelp("The last paused date.", valueName: "yyyy-mm-dd")) var until: String

    func validate() throws {
        if all && streak != nil { throw ValidationError("--streak and --all: name one streak or all of them") }
    }

    func run() throws {
        try global.run(.write, existing: true) { c in
            c.report(try c.pause(user: id, streak: streak, all: all, from: from, until: until, author: loginName()))
        }
    }
}

struct Resume: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "End the current pause from today on, or remove one that has not begun.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The user's id.", completion: Completions.users) var id: String
    @Option(help: "The streak (default daily).", completion: Completions.streaks) var streak: String?
    @Flag(help: "Every streak of the user.") var all = false

    func validate() throws {
        if all && streak != nil { throw ValidationError("--streak and --all: name one streak or all of them") }
    }

    func run() throws {
        try global.run(.write, existing: true) { c in
            c.report(try c.resume(user: id, streak: streak, all: all, author: loginName()))
        }
    }
}

struct Repair: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair",
        abstract: "Mend the streak's latest break, within repair.window_hours of it.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The user's id.", completion: Completions.users) var id: String
    @Option(help: "The streak (default daily).", completion: Completions.streaks) var streak: String?

    func run() throws {
        try global.run(.write, existing: true) { c in
            c.report(try c.repair(user: id, streak: streak, author: loginName()))
        }
    }
}
