import StreakCore
import StreakStore

/// `POST /v1/checkins` (SPEC §11): a batch of check-ins as `import` takes them, all or nothing
/// (or the valid ones with `skip_invalid`), in one transaction, checked, sorted and stored by
/// import's own code (`ImportChecker`, `SortedCheckins`, the store's `CheckinImport`).
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
        let items: BatchItems
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
                try body.withUnsafeBufferPointer { body in
                    let (rows, checker, rejected) = try checkBatch(items, body, in: w)
                    if !rejected.isEmpty && !skipInvalid {
                        // Refused whole: the transaction ends without a write.
                        return Self.batchAnswer(422, InsertResult(), rejected)
                    }
                    guard rows.count > 0 else { return Self.batchAnswer(200, InsertResult(), rejected) }
                    // As import hands them over: in the store's order, each (user, event id)
                    // given again after the first (the store counts those as duplicates). Every
                    // batch carries a row at least: the handoff never waits.
                    let bulk = try w.checkinImport(storedAt: now, expectedRows: rows.count)
                    let handoff = Handoff<CheckinRows>(capacity: Self.apiBatchItems + 1)
                    _ = rows.drain(checker, handoff)
                    handoff.finish()
                    while let batch = handoff.take() { try bulk.insert(batch) }
                    let result = try bulk.finish()
                    try recordSettings(for: checker.streaksUsed, in: w)
                    // As import: the usual users it stored check-ins for, not every one it names.
                    try refreshUsual(users: Set(bulk.usualUsers()), in: w)
                    try planUnplanned(in: w)
                    return Self.batchAnswer(200, result, rejected)
                }
            }
        } catch {
            return .failed(error)
        }
    }

    /// A batch's items: its JSON lines (where each is in the body), or its array's elements read.
    enum BatchItems {
        case lines([Range<Int>])
        case records([Result<CheckinInput, FieldProblems>])

        var count: Int {
            switch self {
            case .lines(let lines): lines.count
            case .records(let records): records.count
            }
        }
    }

    /// Each item checked by the rules `import` applies (a plain line on its bytes, as import
    /// reads it), against the users the batch names (read once each); the valid ones held
    /// sorted, the checker that numbered them, and the problems of the others by their index.
    func checkBatch(_ items: BatchItems, _ body: UnsafeBufferPointer<UInt8>, in r: some UserReading) throws -> (
        SortedCheckins, ImportChecker, [(Int, [FieldProblem])]
    ) {
        var rules = CheckinRules(zones: zones, now: now)
        rules.names = [:]
        rules.unknownUser = .request
        // The users named, each looked up once; a line read whole here is not read again.
        var plain = PlainCheckinLine()
        var fields = RowFields()
        var read: [Int: Result<CheckinInput, FieldProblems>] = [:]
        var named = Set<String>()
        switch items {
        case .lines(let lines):
            for (index, range) in lines.enumerated() {
                let text = UnsafeBufferPointer(rebasing: body[range])
                if plain.fields(text, into: &fields) {
                    named.insert(String(decoding: text[fields.user], as: UTF8.self))
                } else {
                    let record = CheckinJSONLines.records(Substring(String(decoding: text, as: UTF8.self)))
                    if case .success(let input) = record { named.insert(input.user) }
                    read[index] = record
                }
            }
        case .records(let records):
            for case .success(let input) in records { named.insert(input.user) }
        }
        var known: [(id: String, zone: String)] = []
        for id in named.sorted() where Validate.userID(id) == nil {
            if let user = try r.user(id) { known.append((id, user.zone)) }
        }
        var checker = ImportChecker(rules: rules, users: known)
        let rows = SortedCheckins(now: now, expectedRows: items.count)
        var rejected: [(Int, [FieldProblem])] = []
        func add(_ index: Int, _ record: Result<CheckinInput, FieldProblems>) throws {
            switch record {
            case .failure(let problems): rejected.append((index, problems.all))
            case .success(let input):
                switch checker.check(input) {
                case .success(let c): guard rows.append(c, &checker, nil) else { throw BatchTooLarge() }
                case .failure: rejected.append((index, checker.problems(input)))
                }
            }
        }
        switch items {
        case .lines(let ranges):
            var lines: [InputFile.Line] = []
            var quick: [QuickCheckin?] = []
            for start in stride(from: 0, to: ranges.count, by: 64) {
                let part = start..<min(start + 64, ranges.count)
                lines = part.map { i in
                    let text = UnsafeBufferPointer(rebasing: body[ranges[i]])
                    return InputFile.Line(number: i, text: text, problem: nil, isASCII: text.allSatisfy { $0 < 0x80 })
                }
                checker.quickJSON(lines, into: &quick)
                for (k, line) in lines.enumerated() {
                    if let q = quick[k] {
                        guard rows.append(q, from: line.text, checker, nil) else { throw BatchTooLarge() }
                    } else {
                        try add(line.number, read[line.number] ?? CheckinJSONLines.records(line.string))
                    }
                }
            }
        case .records(let records):
            for (index, record) in records.enumerated() { try add(index, record) }
        }
        return (rows, checker, rejected)
    }

    /// The items of a batch's body: a JSON line each (blank lines are no items; a line ends at
    /// a line feed, a carriage return before it left out), or the elements of a JSON array; an
    /// item that does not parse is a problem of its own (a line), or the whole body's 400 (an
    /// array, whose elements cannot be told apart past the error).
    static func batchItems(_ body: [UInt8], ndjson: Bool) -> Result<BatchItems, APIAnswer> {
        guard String(validating: body, as: UTF8.self) != nil else {
            return .failure(.problem(400, "the body is not UTF-8 text"))
        }
        if ndjson {
            var lines: [Range<Int>] = []
            body.withUnsafeBufferPointer { body in
                var start = 0
                while start <= body.count {
                    let end = body[start...].firstIndex(of: 10) ?? body.count
                    var line = start..<end
                    start = end + 1
                    if body[line].last == 13 { line = line.dropLast() }
                    let text = UnsafeBufferPointer(rebasing: body[line])
                    if InputFile.Line(number: 0, text: text, problem: nil, isASCII: false).isBlank { continue }
                    lines.append(line)
                    if lines.count > apiBatchItems { break }
                }
            }
            return .success(.lines(lines))
        }
        let objects = body.withUnsafeBufferPointer { JSONReader.objects($0) }
        switch objects {
        case .success(let objects): return .success(.records(objects.map(CheckinJSONLines.records)))
        case .failure(let p):
            return .failure(
                .problem(
                    400, "the body is not a JSON array of check-ins",
                    errors: [.init(pointer: Self.pointer(p.field), detail: p.message)]))
        }
    }

    /// A field's JSON pointer into its item; no field is the whole item (a line that is not JSON).
    static func pointer(_ field: String) -> String { field.isEmpty ? "" : "/" + field }

    /// `{"stored","duplicates","rejected":[{"index","errors"}]}`; as problem details when refused
    /// (422: those members beside `type`, `title`, `status` and `detail`).
    static func batchAnswer(_ status: Int, _ result: InsertResult, _ rejected: [(Int, [FieldProblem])]) -> APIAnswer {
        var fields: [(String, JSON)] = [
            ("stored", .int(result.inserted)), ("duplicates", .int(result.duplicates)),
            (
                "rejected",
                .array(
                    rejected.map { index, problems in
                        .object([
                            ("index", .int(index)),
                            (
                                "errors",
                                .array(
                                    problems.map {
                                        APIAnswer.FieldError(pointer: Self.pointer($0.field), detail: $0.message).json
                                    })
                            ),
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

/// More rows than a batch holds reached `SortedCheckins`' limit: never with 10,000 check-ins.
private struct BatchTooLarge: Error {}
