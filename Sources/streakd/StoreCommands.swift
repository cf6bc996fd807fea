import ArgumentParser
import StreakJobs
import StreakStore

struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store", abstract: "Check the store for damage, or back it up.",
        subcommands: [Check.self, Backup.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Look at every page and reference of the store; exit 74 when it is damaged.",
            discussion: "Reads the whole store (it takes a while on a large one) and changes nothing.")
        @OptionGroup var global: GlobalOptions
        func run() throws { try global.run(.read, anyVersion: true) { try $0.checkStore() } }
    }

    struct Backup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "backup",
            abstract: "Write a consistent copy of the store to a new file, while other commands go on.",
            discussion: """
                The copy is the store as of one instant, a SQLite file on its own (no -wal beside it), with the \
                store's mode. FILE must not exist yet: to keep one copy, back up to a new name, then mv it over the \
                old one. The store is checked first, as store check does: a damaged store is exit 74 and no copy.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The new file.") var file: String
        @Flag(help: "Copy without checking the store first (a damaged store is copied as it is).") var noCheck = false
        func run() throws {
            try global.run(.read, anyVersion: true) { try $0.backupStore(to: file, check: !noCheck) }
        }
    }
}
