import Foundation
import StreakPostgres
import StreakTestKit
import Testing

/// A connection to a fresh database.
func freshConnection(settings: PGSettings = PGSettings()) throws -> PGConnection {
    try PGConnection(url: try TestPostgres.freshDatabase(), settings: settings)
}

/// Runs `body`, returning its value and the seconds it took.
func timed<T>(_ body: () throws -> T) rethrows -> (T, Double) {
    let start = ContinuousClock.now
    let value = try body()
    let elapsed = start.duration(to: .now)
    return (value, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

/// The PGError `body` throws, or a recorded issue when it throws none or another.
func pgError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> PGError? {
    do {
        try body()
        Issue.record("expected a PGError, got none", sourceLocation: sourceLocation)
    } catch let error as PGError {
        return error
    } catch {
        Issue.record("expected a PGError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

func ms(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }
