import StreakCore
import StreakStore

/// `POST /v1/checkins` (SPEC §11): a batch of check-ins as `import` takes them, all or nothing
/// (or the valid ones with `skip_invalid`), in one transaction.
extension Context {
    /// The largest body of a batch (SPEC §11).
    public static let apiBatchLimit = 16 << 20
    /// The most check-ins in one batch.
    public static let apiBatchItems = 10_000

    public func apiBatch(contentType: String?, body: [UInt8], skipInvalid: Bool) -> APIAnswer {
        let type = Self.mediaType(contentType)
        guard type == "application/x-ndjson" || type == "application/json" else {
            return .problem(
                415,
                "a batch is JSON lines (Content-Type: application/x-ndjson) or a JSON array (application/json); "
                    + "got \(quoted(contentType ?? "none"))")
        }
        let items: [Result<CheckinInput, FieldProblem>]
        switch Self.batchItems(body, ndjson: type == "application/x-ndjson") {
        case .success(let read): items = read
        case .failure(let answer): return answer
        }
        guard items.count <= Self.apiBatchItems else {
            return .problem(
                413,
                "a batch holds at most \(Self.apiBatchItems) check-ins; this one has \(items.count): send it in parts")
        }
        do {
            return try store.write(.bulkImport) { w -> APIAnswer in
                let (checked, rejected) = try checkBatch(items, in: w)
                if !rejected.isEmpty && !skipInvalid {
                    // Refused whole: the transaction ends without a write.
                    return Self.batchAnswer(422, InsertResult(), rejected)
                }
                var result = InsertResult()
                // Of the check-ins of one user with one event id, the first is the one stored (as
                // import does); the others are duplicates. The rest go in the store's order.
                var seen = Set<[String]>()
                let kept = checked.filter { c in
                    guard let id = c.eventID else { return true }
                    if seen.insert([c.user, id]).inserted { return true }
                    result.duplicates += 1
                    return false
                }
                let sorted = kept.sorted { ($0.user, $0.streak, $0.instant) < ($1.user, $1.streak, $1.instant) }
                if !sorted.isEmpty {
                    let bulk = try w.checkinImport(storedAt: now, expectedRows: sorted.count)
                    try bulk.insert(CheckinRows(sorted))
                    let stored = try bulk.finish()
                    result.inserted = stored.inserted
                    result.duplicates += stored.duplicates
                    try recordSettings(for: Set(sorted.map(\.streak)), in: w)
                    try refreshUsual(users: Set(sorted.map(\.user)), in: w)
                    try planUnplanned(in: w)
                }
                return Self.batchAnswer(200, result, rejected)
            }
        } catch {
            return .failed(error)
        }
    }

    /// Each item checked by the rules `import` applies, against the users the batch names (read
    /// once each); the valid ones, and the problems of the others by their index.
    func checkBatch(_ items: [Result<CheckinInput, FieldProblem>], in r: some UserReading) throws -> (
        [NewCheckin], [(Int, FieldProblem)]
    ) {
        var zoneOf: [String: String] = [:]
        for case .success(let input) in items where zoneOf[input.user] == nil && Validate.userID(input.user) == nil {
            if let user = try r.user(input.user) { zoneOf[input.user] = user.zone }
        }
        var rules = CheckinRules(zones: zones, now: now)
        rules.names = [:]
        var checked: [NewCheckin] = []
        var rejected: [(Int, FieldProblem)] = []
        for (index, item) in items.enumerated() {
            switch item.flatMap({ rules.check($0) { zoneOf[$0] } }) {
            case .success(let c): checked.append(c)
            case .failure(let p): rejected.append((index, p))
            }
        }
        return (checked, rejected)
    }

    /// The items of a batch's body: a JSON line each (blank lines are no items), or the elements
    /// of a JSON array; an item that does not parse is a problem of its own (a line), or the whole
    /// body's 400 (an array, whose elements cannot be told apart past the error).
    static func batchItems(_ body: [UInt8], ndjson: Bool) -> Result<[Result<CheckinInput, FieldProblem>], APIAnswer> {
        guard let text = String(validating: body, as: UTF8.self) else {
            return .failure(.problem(400, "the body is not UTF-8 text"))
        }
        if ndjson {
            var items: [Result<CheckinInput, FieldProblem>] = []
            for var line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.last == "\r" { line = line.dropLast() }
                if line.allSatisfy(\.isWhitespace) { continue }
                items.append(CheckinJSONLines.record(line))
                if items.count > apiBatchItems { break }
            }
            return .success(items)
        }
        let objects = body.withUnsafeBufferPointer { JSONReader.objects($0) }
        switch objects {
        case .success(let objects): return .success(objects.map(CheckinJSONLines.record))
        case .failure(let p):
            return .failure(
                .problem(
                    400, "the body is not a JSON array of check-ins",
                    errors: [.init(pointer: p.field.isEmpty ? "" : "/" + p.field, detail: p.message)]))
        }
    }

    /// `{"stored","duplicates","rejected":[{"index","errors"}]}`; as problem details when refused
    /// (422: those members beside `type`, `title`, `status` and `detail`).
    static func batchAnswer(_ status: Int, _ result: InsertResult, _ rejected: [(Int, FieldProblem)]) -> APIAnswer {
        var fields: [(String, JSON)] = [
            ("stored", .int(result.inserted)), ("duplicates", .int(result.duplicates)),
            (
                "rejected",
                .array(
                    rejected.map { index, p in
                        .object([
                            ("index", .int(index)),
                            ("errors", .array([APIAnswer.FieldError(pointer: "/" + p.field, detail: p.message).json])),
                        ])
                    })
            ),
        ]
        guard status != 200 else { return .json(200, .object(fields)) }
        let detail =
            "\(rejected.count) check-in\(rejected.count == 1 ? " is" : "s are") not valid; nothing was stored "
            + "(?skip_invalid=true stores the valid ones)"
        fields.insert(
            contentsOf: [
                ("type", .string("about:blank")), ("title", .string(APIAnswer.phrase(status))),
                ("status", .int(status)), ("detail", .string(detail)),
            ], at: 0)
        return APIAnswer(status: status, contentType: "application/problem+json", body: JSON.object(fields).text + "\n")
    }
}
