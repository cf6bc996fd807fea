import Foundation
import StreakTestKit
import Testing

/// `streakd serve` against hostile clients over real TCP (SPEC §11, "Limits"): stalled headers,
/// an endless body, oversized and too many headers, invalid UTF-8, deep JSON, wrong tokens in a
/// loop and 10,000 idle connections at once. Others are still answered, serve's memory stays
/// bounded, nothing crashes. The clients are a Python program (raw sockets: curl cannot stall).
@Suite(
    "serve: hostile clients", .fastTier,
    .requires(.program("/usr/bin/curl", package: "curl"), .program("/usr/bin/python3", package: "python3")))
struct ServeHostileTests {
    /// The clients' program against a `serve` on TCP with `[api]` as `config` says: the answers
    /// it got and what it measured, as a JSON object. `phases`: "hostile" (all but the idle
    /// connections, then `idle` of them) or "idle" (only those).
    static func attack(_ s: Sandbox, config: String, phases: String, idle: Int) throws -> (Server, [String: Any]) {
        let token = try ServeTests.token(s, "app", "ingest")
        let server = try Server(
            s, child: s.spawn(["serve", "--config", try s.file("api.toml", config), "--listen", "127.0.0.1:0"]))
        let port = try #require(server.addresses.first?.split(separator: ":").last.map(String.init))
        let script = try s.file("hostile.py", Self.clients)
        let pid = String(server.child.process.processIdentifier)
        let result = run(["/usr/bin/python3", script, port, pid, token, String(idle), phases], timeout: .seconds(600))
        try #require(result.code == 0, "\(result)")
        print("serve under hostile clients (\(phases)): \(result.out)")
        return (server, try jsonObject(result.out))
    }

    @Test func hostileClientsNeitherStopOthersNorGrowMemory() throws {
        let s = try Sandbox()
        s.addUser("u1")
        let (server, r) = try Self.attack(
            s, config: "[api]\nidle_timeout_seconds = 3\nrequest_timeout_seconds = 3\n", phases: "hostile", idle: 300)

        // A stalled request head and an endless body are cut off by the time-outs (3 s), and
        // others are answered meanwhile.
        #expect((r["stalled_closed_after"] as? Double ?? 99) < 7, "\(r)")
        #expect(r["stalled_others"] as? Int == 200, "\(r)")
        #expect(r["endless_status"] as? Int == 413, "\(r)")
        #expect((r["endless_closed_after"] as? Double ?? 99) < 8, "\(r)")
        // Headers over 16 KiB or 100 fields: 400, connection closed.
        #expect(r["big_header"] as? Int == 400 && r["many_headers"] as? Int == 400, "\(r)")
        #expect(r["invalid_utf8"] as? Int == 400 && r["deep_json"] as? Int == 400, "\(r)")
        #expect(r["bad_chunk"] as? Int == 400, "a malformed chunked body: \(r)")
        #expect(r["wrong_tokens"] as? [Int] == [401], "every wrong token refused: \(r)")
        #expect(r["right_token"] as? Int == 201, "\(r)")
        // Idle connections (timed out after 3 s here; ServeLoadTests holds 10,000): others answered.
        #expect(r["idle_open"] as? Int == 300 && r["idle_others"] as? Int == 200, "\(r)")
        #expect((r["idle_others_seconds"] as? Double ?? 99) < 5, "\(r)")
        #expect((r["rss_idle_mb"] as? Int ?? 999) < 200, "serve's memory: \(r)")
        #expect(r["final_health"] as? Int == 200, "\(r)")
        #expect(server.child.process.isRunning, "serve is still there")
        #expect(try s.statusObject()["total_checkins"] as? Int == 1, "only the one right check-in")
        server.stop()
    }

    /// Past `[api] max_connections` a new connection waits (in the socket's backlog) until one
    /// closes, then it is answered; nothing is refused while the backlog has room.
    @Test func pastTheConnectionLimitNewConnectionsWait() throws {
        let s = try Sandbox()
        let config = try s.file("api.toml", "[api]\nmax_connections = 4\n")
        let server = try Server(s, child: s.spawn(["serve", "--config", config, "--listen", "127.0.0.1:0"]))
        let port = try #require(server.addresses.first?.split(separator: ":").last.map(String.init))
        let script = try s.file(
            "limit.py",
            #"""
            import socket, sys, time
            port = int(sys.argv[1])
            held = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
            time.sleep(0.5)
            late = socket.create_connection(("127.0.0.1", port))
            late.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            late.settimeout(1.5)
            try:
                waited = late.recv(100) == b""
            except socket.timeout:
                waited = True
            held[0].close()
            late.settimeout(20)
            answer = late.recv(100)
            print("waited" if waited else "not-waited", answer.split(b" ")[1].decode() if answer else "none")
            """#)
        let result = run(["/usr/bin/python3", script, port])
        #expect(result.out == "waited 200\n", "\(result)")
        #expect(try server.request("GET", "/v1/health").status == 200)
        server.stop()
    }

    /// A client without a token is refused (401) as soon as its request head has come, and its
    /// body is never held: ten of them sending 15 MiB each leave serve's memory as it was.
    @Test func anAnonymousBodyIsRefusedBeforeItIsRead() throws {
        let s = try Sandbox()
        s.addUser("u1")
        let server = try Server(s, child: s.spawn(["serve", "--listen", "127.0.0.1:0"]))
        let port = try #require(server.addresses.first?.split(separator: ":").last.map(String.init))
        let script = try s.file(
            "anonymous.py",
            #"""
            import socket, sys, threading, time
            port, pid = int(sys.argv[1]), sys.argv[2]
            rss = lambda: int(open(f"/proc/{pid}/status").read().split("VmRSS:")[1].split()[0]) // 1024
            head = b"POST /v1/checkins HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: %d\r\n\r\n"
            first = socket.create_connection(("127.0.0.1", port))
            first.sendall(head % (1 << 20))
            first.settimeout(3)
            try:
                status = first.recv(100).split(b" ")[1].decode()
            except socket.timeout:
                status = "none"
            before, body, held = rss(), b" " * (15 << 20), []
            def send():
                c = socket.create_connection(("127.0.0.1", port))
                held.append(c)
                c.sendall(head % (len(body) + 1) + body)
            threads = [threading.Thread(target=send) for _ in range(10)]
            [t.start() for t in threads]
            [t.join() for t in threads]
            time.sleep(1)
            print(status, rss() - before)
            """#)
        let result = run(["/usr/bin/python3", script, port, String(server.child.process.processIdentifier)])
        let fields = result.out.split(separator: " ").map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(fields.first == "401", "answered before the body came: \(result)")
        #expect((fields.last.flatMap { Int($0) } ?? 999) < 60, "serve's memory grew by MiB: \(result)")
        #expect(try server.request("GET", "/v1/health").status == 200)
        server.stop()
    }

    static let clients = #"""
        import json, os, resource, socket, sys, time
        port, pid, token, idle_n, phases = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        idle_n = min(idle_n, hard - 200)
        out = {}

        def rss():
            for line in open(f"/proc/{pid}/status"):
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) // 1024

        def conn():
            s = socket.create_connection(("127.0.0.1", port))
            s.settimeout(20)
            return s

        def until_closed(s):
            data = b""
            try:
                while True:
                    d = s.recv(65536)
                    if not d:
                        break
                    data += d
            except (socket.timeout, ConnectionResetError):
                pass
            return data

        def status(data):
            try:
                return int(data.split(b" ")[1])
            except Exception:
                return 0

        def request(head, body=b""):
            s = conn()
            s.sendall(head + b"\r\n" + body)
            data = until_closed(s)
            s.close()
            return status(data)

        def fds():
            return len(os.listdir(f"/proc/{pid}/fd"))

        def get_health():
            return request(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n")

        def post(body, extra=b""):
            head = (b"POST /v1/users/u1/checkins HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                    b"Content-Type: application/json\r\nAuthorization: Bearer " + token.encode() + b"\r\n"
                    + extra + b"Content-Length: " + str(len(body)).encode() + b"\r\n")
            return request(head, body)

        out["rss_start_mb"] = rss()

        def hostile():
            # A request head that never ends.
            stalled = conn()
            stalled.sendall(b"POST /v1/users/u1/checkins HTTP/1.1\r\nHost: x\r\n")
            t = time.time()
            out["stalled_others"] = get_health()
            until_closed(stalled)
            out["stalled_closed_after"] = round(time.time() - t, 2)

            # An endless chunked body (a client with a token: one without is refused before its
            # body is read): 413 once past 64 KiB, then cut off by the request time-out.
            endless = conn()
            endless.sendall(b"POST /v1/users/u1/checkins HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                            b"Authorization: Bearer " + token.encode() + b"\r\nTransfer-Encoding: chunked\r\n\r\n")
            t = time.time()
            answer = b""
            endless.setblocking(False)
            while time.time() - t < 20:
                try:
                    endless.send(b"400\r\n" + b" " * 1024 + b"\r\n")
                except BlockingIOError:
                    pass
                except (BrokenPipeError, ConnectionResetError):
                    break
                try:
                    d = endless.recv(65536)
                    if d == b"":
                        break
                    answer += d
                except BlockingIOError:
                    pass
                except ConnectionResetError:
                    break
                time.sleep(0.01)
            out["endless_closed_after"] = round(time.time() - t, 2)
            out["endless_status"] = status(answer)
            endless.close()

            out["big_header"] = request(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20000 + b"\r\n")
            out["many_headers"] = request(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n"
                                          + b"".join(b"X-H%d: v\r\n" % i for i in range(150)))
            out["invalid_utf8"] = post(b'{"id":"\xff\xfe"}')
            out["deep_json"] = post(b"[" * 60000)
            out["bad_chunk"] = request(b"POST /v1/users/u1/checkins HTTP/1.1\r\nHost: x\r\n"
                                       b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                                       b"Authorization: Bearer " + token.encode() + b"\r\n",
                                       b"zz\r\nabc\r\n")

            # Wrong tokens in a loop on one connection, then the right one still works.
            s = conn()
            statuses = set()
            for i in range(300):
                s.sendall(b"GET /v1/users/u1/streaks/daily HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong%d\r\n\r\n" % i)
                data = b""
                while b"\r\n\r\n" not in data:
                    data += s.recv(65536)
                head, _, rest = data.partition(b"\r\n\r\n")
                length = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0])
                while len(rest) < length:
                    rest += s.recv(65536)
                statuses.add(status(head))
            s.close()
            out["wrong_tokens"] = sorted(statuses)
            out["right_token"] = post(b"{}")

        if phases == "hostile":
            hostile()

        # Many idle connections at once.
        before = fds()
        idle = []
        for i in range(idle_n):
            try:
                idle.append(socket.create_connection(("127.0.0.1", port)))
            except OSError as e:
                out["idle_error"] = str(e)
                break
        out["idle_open"] = len(idle)
        # Until serve has accepted them all (its descriptors), at most a minute.
        t = time.time()
        while phases == "idle" and fds() < before + len(idle) and time.time() - t < 120:
            time.sleep(0.1)
        out["idle_accepted"] = fds() - before
        out["idle_accept_seconds"] = round(time.time() - t, 2)
        t = time.time()
        out["idle_others"] = get_health()
        out["idle_others_seconds"] = round(time.time() - t, 2)
        time.sleep(0.5)
        out["rss_idle_mb"] = rss()
        for s in idle:
            s.close()
        time.sleep(1)
        out["rss_after_mb"] = rss()
        out["final_health"] = get_health()
        print(json.dumps(out))
        """#
}
