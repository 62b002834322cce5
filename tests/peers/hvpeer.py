"""What the HTTP API peers of tests/peers share (pve_api.py, nutanix_api.py,
ovirt_api.py, vsphere_rest.py, azure_api.py): the request log and the JSON
answers of the control endpoints (`Handler`), the server's start with its
certificate and its JSON line (`server_args`, `serve`), and a TLS-terminating
proxy for CONNECT tunnels (`serve_proxy`).

Each peer imports it from its own folder (python3 puts a script's folder
first on sys.path), so a fresh clone runs the peers with nothing installed.
"""

import json
import os
import select
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


class Handler(BaseHTTPRequestHandler):
    """A peer's request handler: HTTP/1.1, each request written to the
    server's log (`--log`), JSON control answers."""

    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        if self.server.log:
            self.server.log.write("%s %s\n" % (time.strftime("%H:%M:%S"), fmt % args))
            self.server.log.flush()

    def plain(self, status, obj):
        """A control answer: `obj` as JSON, nothing else."""
        raw = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def views(self, path, names):
        """GET /fencekit/NAME for NAME of `names` ("vms", "calls", "tasks":
        the world's tables of that name, under its lock); 404 otherwise."""
        world = self.server.world
        with world.lock:
            for name in names:
                if path == "/fencekit/" + name:
                    table = getattr(world, name)
                    return self.plain(200, dict(table) if name == "calls" else list(table.values()))
        return self.plain(404, {"error": "no such control"})


def server_args(ap, port=0, bind=True):
    """The options every peer takes: --port (`port`: its default, None:
    required), --bind (when `bind`), --cert, --key, --info, --log."""
    if port is None:
        ap.add_argument("--port", type=int, required=True)
    else:
        ap.add_argument("--port", type=int, default=port)
    if bind:
        ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--info", help="also write the JSON line to this file")
    ap.add_argument("--log", help="request log file")


def write_info(path, line):
    """The JSON line into `path`, whole or not at all (the start scripts wait
    for it)."""
    if path:
        with open(path + ".tmp", "w") as f:
            f.write(line + "\n")
        os.rename(path + ".tmp", path)


def serve(handler, world, a, info, bind=None, tls=True, **attrs):
    """Serves `handler` on `bind` (else --bind) and --port, over TLS with
    --cert and --key unless `tls` is false, `world` and `attrs` on the
    server; writes and prints the JSON line `info(port)` once it listens,
    then serves until interrupted."""
    srv = ThreadingHTTPServer((bind or a.bind, a.port), handler)
    srv.daemon_threads = True
    srv.world = world
    srv.log = open(a.log, "a") if a.log else None
    for k, v in attrs.items():
        setattr(srv, k, v)
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(a.cert, a.key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    line = json.dumps(info(srv.server_address[1]))
    write_info(a.info, line)
    print(line, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


# ---- the TLS-terminating proxy ------------------------------------------
def pipe(a, b):
    """Copies bytes both ways until either side closes (or 60 s of quiet)."""
    try:
        while True:
            r, _, _ = select.select([a, b], [], [], 60)
            if not r:
                return
            for s in r:
                d = s.recv(65536)
                if not d:
                    return
                (b if s is a else a).sendall(d)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.close()
            except OSError:
                pass


def proxy_conn(c, ctx, port):
    """One proxy client: a CONNECT tunnel is answered and terminated with
    `ctx`, its plaintext relayed to 127.0.0.1:`port`; a request in absolute
    form is relayed there in origin form."""
    try:
        head = b""
        while b"\r\n\r\n" not in head:
            d = c.recv(4096)
            if not d:
                return c.close()
            head += d
        line, _, rest = head.partition(b"\r\n")
        method, target, version = line.decode().split(" ", 2)
        upstream = socket.create_connection(("127.0.0.1", port))
        for sock in (c, upstream):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if method == "CONNECT":
            c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            t = ctx.wrap_socket(c, server_side=True)
            return pipe(t, upstream)
        # Absolute form (http://169.254.169.254/...): relayed in origin form.
        u = urlsplit(target)
        upstream.sendall(f"{method} {u.path}{'?' + u.query if u.query else ''} {version}\r\n".encode() + rest)
        pipe(c, upstream)
    except Exception:
        try:
            c.close()
        except OSError:
            pass


def serve_proxy(port, ctx, upstream_port):
    """The proxy on 127.0.0.1:`port`, each client on a thread of its own."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(64)
    while True:
        c, _ = s.accept()
        threading.Thread(target=proxy_conn, args=(c, ctx, upstream_port), daemon=True).start()
