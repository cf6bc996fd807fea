import ArgumentParser
import StreakJobs
import StreakStore

struct UserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Manage users.",
        subcommands: [Add.self, Set.self, List.self, Remove.self, Import.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add a user.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The user's id.") var id: String
        @Option(help: ArgumentHelp("The user's time zone (IANA name).", valueName: "zone")) var tz: String
        @Option(help: ArgumentHelp("Local reminder time (default 20:00).", valueName: "hh:mm")) var remindAt: String?
        @Flag(help: "Send this user no reminders.") var noRemind = false
        func run() throws {
            try global.run(.write) { try $0.addUser(id: id, tz: tz, remindAt: remindAt, remind: !noRemind) }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Change a user's zone or reminders.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The user's id.") var id: String
        @Option(help: ArgumentHelp("The user's new time zone.", valueName: "zone")) var tz: String?
        @Option(help: ArgumentHelp("Local reminder time.", valueName: "hh:mm")) var remindAt: String?
        @Flag(inversion: .prefixedNo, help: "Turn reminders on or off.") var remind: Bool?
        func run() throws {
            try global.run(.write) { try $0.setUser(id: id, tz: tz, remindAt: remindAt, remind: remind) }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List users.")
        @OptionGroup var global: GlobalOptions
        func run() throws { try global.run(.read) { try $0.listUsers() } }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove a user and all their data.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The user's id.") var id: String
        func run() throws { try global.run(.write) { try $0.removeUser(id: id) } }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Add or update users from JSON lines; all or nothing.",
            discussion: #"Each line: {"user":"u1","tz":"Asia/Tokyo","remind_at":"20:00"} (remind_at optional)."#)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The file, or - for standard input.") var file: String
        func run() throws { try global.run(.write) { try $0.importUsers(path: file) } }
    }
}
