"""R2-S2: can a request through the setup's filtering proxy reach a loopback port that
setup.network does not name? Sends raw requests through the host relay socket (the sandbox only
forwards bytes) and reports whether the 'redis' listener saw a connection."""
import socket, threading, sys, time
sys.path.insert(0, "/work/wt-red2")
from app.workspace.cage.network import filtering_proxy

def listener():
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0)); s.listen(16); return s

allowed_srv, redis = listener(), listener()
A, B = allowed_srv.getsockname()[1], redis.getsockname()[1]
hits = []
def serve(sock, name):
    while True:
        c, _ = sock.accept(); hits.append(name)
        try: c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nOK"); c.close()
        except OSError: pass
for s, n in ((allowed_srv, "A"), (redis, "B")):
    threading.Thread(target=serve, args=(s, n), daemon=True).start()

REQS = {
 "connect-B": f"CONNECT 127.0.0.1:{B} HTTP/1.1\r\nHost: 127.0.0.1:{B}\r\n\r\n",
 "get-B": f"GET http://127.0.0.1:{B}/ HTTP/1.1\r\nHost: 127.0.0.1:{B}\r\n\r\n",
 "userinfo": f"GET http://127.0.0.1:{A}@127.0.0.1:{B}/ HTTP/1.1\r\n\r\n",
 "userinfo2": f"GET http://pypi.org@127.0.0.1:{B}/ HTTP/1.1\r\n\r\n",
 "transparent-host": f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{B}\r\n\r\n",
 "transparent-trick": f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{A}/x:{B}\r\n\r\n",
 "transparent-trick2": f"GET /x HTTP/1.1\r\nHost: 127.0.0.1:{A}@127.0.0.1:{B}\r\n\r\n",
 "abs-A-host-B": f"GET http://127.0.0.1:{A}/ HTTP/1.1\r\nHost: 127.0.0.1:{B}\r\n\r\n",
 "connect-A-slash": f"CONNECT 127.0.0.1:{A}/@127.0.0.1:{B} HTTP/1.1\r\n\r\n",
 "connect-userinfo": f"CONNECT 127.0.0.1:{A}@127.0.0.1:{B} HTTP/1.1\r\n\r\n",
 "connect-double-port": f"CONNECT 127.0.0.1:{A}/:{B} HTTP/1.1\r\n\r\n",
 "localhost-B": f"GET http://localhost:{B}/ HTTP/1.1\r\n\r\n",
 "ipv6-B": f"CONNECT [::ffff:127.0.0.1]:{B} HTTP/1.1\r\n\r\n",
 "decimal-ip": f"GET http://2130706433:{B}/ HTTP/1.1\r\n\r\n",
 "allowed-prefix": f"GET http://127.0.0.1:{A}0/ HTTP/1.1\r\n\r\n",
 "stathost": "GET http://tinyproxy.stats/ HTTP/1.1\r\n\r\n",
 "https-scheme-B": f"GET https://127.0.0.1:{B}/ HTTP/1.1\r\n\r\n",
 "space-url": f"GET http://127.0.0.1:{A}/ http://127.0.0.1:{B}/ HTTP/1.1\r\n\r\n",
 "A-itself": f"GET http://127.0.0.1:{A}/ HTTP/1.1\r\n\r\n",
}
with filtering_proxy(["pypi.org", f"127.0.0.1:{A}"]) as sock_path:
    for name, req in REQS.items():
        before = list(hits)
        c = socket.socket(socket.AF_UNIX); c.settimeout(5); c.connect(str(sock_path))
        c.sendall(req.encode())
        try:
            data = c.recv(200)
        except OSError as e:
            data = repr(e).encode()
        c.close(); time.sleep(0.3)
        new = hits[len(before):]
        print(f"{name:22s} reached={new} reply={data[:60]!r}")
print("B (not allowed) reached:", "B" in hits)
