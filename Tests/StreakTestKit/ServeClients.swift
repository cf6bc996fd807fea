/// `streakd serve`'s load clients, a Python program (the command tests' and the hosts' tests'):
///
///     load PORTS TOKEN USERS SECONDS MODE   2 clients a user, each on a keep-alive connection to
///         one of PORTS (comma-separated) in turn, checking in for SECONDS or until its server is
///         gone; MODE "unique" (a fresh id each), "same" (both clients of a user send the same ids,
///         each to another port) or "plain" (no id). Prints "STATUS ID USER" per 2xx answer.
///     replay PORT TOKEN FILE   sends each such line's check-in again; prints how many were 201
///         (not stored before: lost).
public let serveLoadClients = #"""
    import http.client, json, sys, threading, time

    def post(conn, user, body):
        conn.request("POST", f"/v1/users/{user}/checkins", body=json.dumps(body),
                     headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
        r = conn.getresponse()
        r.read()
        return r.status

    mode = sys.argv[1]
    if mode == "replay":
        port, token, path = sys.argv[2], sys.argv[3], sys.argv[4]
        conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=30)
        lost = 0
        for line in open(path):
            if not line.strip():
                continue
            status, ident, user = line.split()
            if post(conn, user, {"id": ident}) == 201:
                lost += 1
        print(lost)
        sys.exit(0)

    ports, token, users, seconds, kind = sys.argv[2].split(","), sys.argv[3], sys.argv[4].split(","), int(sys.argv[5]), sys.argv[6]
    acked, lock = [], threading.Lock()

    def client(number, user, port):
        conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=30)
        end = time.time() + seconds
        n = 0
        while time.time() < end:
            n += 1
            ident = {"unique": f"c{number}-{n}", "same": f"{user}-{n}", "plain": None}[kind]
            try:
                status = post(conn, user, {"id": ident} if ident else {})
            except Exception:
                return
            if 200 <= status < 300:
                with lock:
                    acked.append(f"{status} {ident or '-'} {user}")

    threads = []
    for i, user in enumerate(users):
        for j in range(2):
            t = threading.Thread(target=client, args=(2 * i + j, user, ports[j % len(ports)]))
            t.start()
            threads.append(t)
    for t in threads:
        t.join()
    print("\n".join(acked))
    """#
