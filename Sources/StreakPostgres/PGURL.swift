import CLibpq

#if canImport(Glibc)
    import Glibc
#endif

/// A `postgres://` or `postgresql://` URL, checked by libpq's own parser (`PQconninfoParse`), so
/// it means what it means to psql: a socket directory as host (`postgresql:///db?host=/run/postgresql`
/// or `%2Frun%2Fpostgresql`), `PG*` variables for what it leaves out, `~/.pgpass`, `sslmode`.
///
/// Host lists (`h1,h2`, from the URL or `PGHOST`) are refused: streakd writes, so it needs the one
/// primary, and libpq tries a list's hosts one after another inside a single connect, so one silent
/// host would use up the whole connect deadline before the next is tried. A DNS name or a proxy can
/// stand in front of several servers.
public struct PGURL: Sendable, CustomStringConvertible {
    /// The URL as given, password included: only for libpq.
    public let text: String
    /// The `options` parameter the URL sets, if it sets one (merged with streakd's own).
    let options: String?

    public init(_ text: String) throws(PGError) {
        let shown = PGURL.redacted(text)
        guard text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") else {
            throw PGError(
                .badURL, "\(shown) is not a PostgreSQL URL: it must start with postgres:// or postgresql://")
        }
        // libpq is opened here, at the first PostgreSQL URL (CLibpq), not when streakd starts.
        guard streakd_libpq_load() == 0 else {
            let reason = streakd_libpq_error().map { String(cString: $0) } ?? "not found"
            throw PGError(
                .unreachable,
                "a PostgreSQL store needs libpq, which cannot be loaded (\(reason)); "
                    + "install it: apt install libpq5")
        }
        var error: UnsafeMutablePointer<CChar>?
        guard let parsed = PQconninfoParse(text, &error) else {
            let reason = error.map { trimmed(String(cString: $0)) } ?? "libpq could not parse it (out of memory?)"
            if let error { PQfreemem(error) }
            throw PGError(
                .badURL,
                "the PostgreSQL URL \(shown) cannot be used: \(reason) (its parameters are libpq's: "
                    + "https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-PARAMKEYWORDS)")
        }
        defer { PQconninfoFree(parsed) }
        var values: [String: String] = [:]
        var option = parsed
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { values[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        for (keyword, variable) in [("host", "PGHOST"), ("hostaddr", "PGHOSTADDR"), ("port", "PGPORT")] {
            let value = values[keyword] ?? getenv(variable).map { String(cString: $0) }
            if let value, value.contains(Character(",")) {
                let origin = values[keyword] == nil ? "\(variable) (the environment)" : "the URL's \(keyword)"
                throw PGError(
                    .badURL,
                    "the PostgreSQL URL \(shown) cannot be used: \(origin) lists several (\"\(value)\"); "
                        + "streakd needs the one primary server, so name it alone "
                        + "(a DNS name or a proxy may stand in front of several)")
            }
        }
        self.text = text
        self.options = values["options"]
    }

    /// The URL without its password, for messages and logs.
    public var description: String { PGURL.redacted(text) }

    /// Replaces the password (`user:secret@`, `?password=secret`) with `***`; percent-encoding is
    /// left as written.
    static func redacted(_ url: String) -> String {
        guard let scheme = url.firstRange(of: "://") else { return url }
        var head = String(url[..<scheme.upperBound])
        var rest = Substring(url[scheme.upperBound...])
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") {
            let userinfo = authority[..<at]
            if let colon = userinfo.firstIndex(of: ":") {
                head += userinfo[..<colon] + ":***"
            } else {
                head += userinfo
            }
            rest = rest[at...]
        }
        guard let question = rest.firstIndex(of: "?") else { return head + rest }
        let query = rest[rest.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false)
        let shownQuery = query.map { pair in pair.hasPrefix("password=") ? "password=***" : String(pair) }
        return head + rest[...question] + shownQuery.joined(separator: "&")
    }
}

/// A libpq message on one line, for logs and the journal: libpq ends every message with a
/// newline, puts hints on their own tab-indented line, and one line per address it tried.
func trimmed(_ message: String) -> String {
    var message = Substring(message)
    while let last = message.last, last == "\n" || last == " " { message = message.dropLast() }
    return String(message.replacing("\n\t", with: ". ").replacing("\n", with: "; "))
}
