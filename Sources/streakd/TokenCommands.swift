import ArgumentParser
import StreakJobs
import StreakStore

struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Manage the HTTP API's tokens (kept in the store as SHA-256 only).",
        subcommands: [Add.self, List.self, Remove.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add a token and print it, this once.",
            discussion: """
                Prints a new random token alone on a line (with -o json: {"name","scope","token"}); the store keeps \
                only its SHA-256. Scopes: read (GETs), ingest (read and check-ins), admin (everything).
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The token's name.") var name: String
        @Option(help: ArgumentHelp("What the token may do.", valueName: "ingest|read|admin"))
        var scope: String
        func run() throws { try global.run(.write) { try $0.addToken(name: name, scope: scope) } }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the tokens: names, scopes, created and last used; never the tokens.")
        @OptionGroup var global: GlobalOptions
        func run() throws { try global.run(.read) { try $0.listTokens() } }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove a token: it fails from the server's next request on.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The token's name.") var name: String
        func run() throws { try global.run(.write, existing: true) { try $0.removeToken(name: name) } }
    }
}
