import ArgumentParser
import Foundation
import StreakCore
import StreakJobs
import StreakStore

struct DeliveriesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deliveries", abstract: "List deliveries waiting or given up; send the dead again.",
        subcommands: [List.self, Retry.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List pending and dead deliveries (failed: pending after at least one failed attempt).")
        @OptionGroup var global: GlobalOptions
        @Option(
            help: ArgumentHelp("Only these: pending, failed or dead.", valueName: "state"),
            completion: .list(Context.listedStates))
        var state: String?
        func run() throws { try global.run(.read) { try $0.listDeliveries(state: state) } }
    }

    struct Retry: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "retry",
            abstract: "Put dead deliveries back to pending: the next tick sends them (after fixing the sink).",
            discussion: """
                Each is asked again first, as every retry is: one no longer fresh, or an at_risk whose date has \
                qualified since, is recorded expired and not sent. A delivery already delivered is never sent again.
                """)
        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp("One sink: journal, desktop, hook:NAME or webhook:NAME.", valueName: "name"))
        var sink: String?
        @Option(
            help: ArgumentHelp("One kind: \(NotificationKind.names).", valueName: "kind"),
            completion: .list(NotificationKind.allCases.map(\.rawValue)))
        var kind: String?
        @Option(help: ArgumentHelp("One user's.", valueName: "id"), completion: Completions.users) var user: String?
        @Option(
            parsing: .unconditional,
            help: ArgumentHelp("Those given up at or after this time (as log --since takes it).", valueName: "time"))
        var since: String?
        func run() throws {
            let env = ProcessInfo.processInfo.environment
            try global.run(.write, existing: true) {
                try $0.retryDeliveries(
                    sink: sink, kind: kind, user: user, since: since, localZone: LocalZone.current(environment: env))
            }
        }
    }
}
