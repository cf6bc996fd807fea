import Foundation
import Dispatch
import Synchronization

/// A value a caller hands to another thread and never touches again. The compiler cannot see
/// that the caller lets go, so this is the one place streakd vouches for it: the import's reading
/// thread takes its file, checker and progress bar along, and owns them alone from then on.
struct Handover<Value>: @unchecked Sendable {
    let value: Value
}
