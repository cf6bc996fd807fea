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
        @Option(
            help: ArgumentHelp("The user's time zone (IANA name).", valueName: "zone"), completion: Completions.zones)
        var tz: String
        @Option(
            help: ArgumentHelp(
                "Local reminder time (default 20:00), or usual: the hour the user usually checks in.",
                valueName: "hh:mm|usual"))
        var remindAt: String?
        @Flag(help: "Send this user no reminders.") var noRemind = false
        @Option(
            help: ArgumentHelp(
                "The language of the user's messages, a BCP 47 tag (en, zh-Hans; default messages.default_language).",
                valueName: "tag"), completion: Completions.languages)
        var lang: String?
        func run() throws {
            try global.run(.write) {
                try $0.addUser(id: id, tz: tz, remindAt: remindAt, remind: !noRemind, language: lang)
            }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Change a user's zone, reminders or language.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The user's id.", completion: Completions.users) var id: String
        @Option(help: ArgumentHelp("The user's new time zone.", valueName: "zone"), completion: Completions.zones)
        var tz: String?
        @Option(
            help: ArgumentHelp(
                "Local reminder time, or usual: the hour the user usually checks in.", valueName: "hh:mm|usual"))
        var remindAt: String?
        @Flag(inversion: .prefixedNo, help: "Turn reminders on or off.") var remind: Bool?
        @Option(
            help: ArgumentHelp("The language of the user's messages, a BCP 47 tag.", valueName: "tag"),
            completion: Completions.languages)
        var lang: String?
        func run() throws {
            try global.run(.write, existing: true) {
                try $0.setUser(id: id, tz: tz, remindAt: remindAt, remind: remind, language: lang)
            }
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
        @Argument(help: "The user's id.", completion: Completions.users) var id: String
        func run() throws { try global.run(.write, existing: true) { try $0.removeUser(id: id) } }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Add or update users from JSON lines; all or nothing.",
            discussion:
                #"Each line: {"user":"u1","tz":"Asia/Tokyo","remind_at":"20:00"} (remind_at optional: HH:MM or "usual")."#
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The file, or - for standard input.", completion: .file(extensions: ["jsonl"])) var file: String
        func run() throws { try global.run(.write) { try $0.importUsers(path: file) } }
    }
}
