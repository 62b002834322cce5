#!/usr/bin/env python3
"""fencekit's ePowerSwitch peer: the "hidden page" of an ePowerSwitch 8M+ as
fence_eps (fence-agents 4.12.1) talks to it, written from that exchange and the
device's documented hidden-page feature, for fencekit's fence_eps and eps://.

The exchange (plain HTTP; the 8M+ has no TLS)
  GET /PAGE                 the page: one line per outlet, "P01=1<br>" (1 on, 0 off)
  GET /PAGE?P03=0           switch outlet 03 off (P03=1: on); the answer is the page
                            as it reads when the request arrives: the relay moves
                            --switch-ms later (default 100 ms)
  Basic authentication when --user is given: a wrong or missing one is 401.
  Any other path is 404; a parameter that is not "Pnn=0|1" is 400.

Outlets: P01..P08 (the master unit), all on at start.

Test control, no authentication (a loopback test peer):
  GET  /fencekit/outlets              JSON {"01": "1", ...}
  GET  /fencekit/calls                JSON list of the page requests seen ("GET /hidden.htm?P01=0")
  POST /fencekit/outlet?n=NN&value=V  set what the page shows for NN (any text: "7" is a
                                      value the device never documents)
  POST /fencekit/stuck?n=NN           NN's relay ignores commands (a welded relay)
  POST /fencekit/hang?count=N         the next N page requests are read and never answered
  POST /fencekit/drop?count=N         the next N switch requests are carried out and their
                                      connection closed without an answer
  POST /fencekit/garble?count=N       the next N page requests answer an HTML page without
                                      outlet lines (a login page, a firmware error page)
  POST /fencekit/reset
Run: eps_http.py --port P [--bind ADDR] [--page hidden.htm] [--user U --password W]
                 [--switch-ms MS] [--info FILE] [--log FILE]
"""
import argparse
import base64
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

OUTLETS = ["%02d" % n for n in range(1, 9)]


class World:
    def __init__(self, switch_ms):
        self.lock = threading.Lock()
        self.switch_ms = switch_ms
        self.reset()

    def reset(self):
        with self.lock:
            self.shown = {o: "1" for o in OUTLETS}
            self.stuck = set()
            self.calls = []
            self.hang = 0
            self.drop = 0
            self.garble = 0

    def switch(self, outlet, value):
        if outlet in self.stuck:
            return

        def later():
            time.sleep(self.switch_ms / 1000.0)
            with self.lock:
                self.shown[outlet] = value

        threading.Thread(target=later, daemon=True).start()


def page(world):
    with world.lock:
        lines = "".join("P%s=%s<br>\n" % (o, world.shown[o]) for o in OUTLETS)
    return "<html><head><title>ePowerSwitch</title></head><body>\n%s</body></html>\n" % lines


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        if self.server.log:
            with open(self.server.log, "a") as f:
                f.write("%s %s\n" % (time.strftime("%H:%M:%S"), fmt % args))

    def send(self, status, body, ctype="text/html", headers=()):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def control(self, method, path, q):
        w = self.server.world
        if method == "GET" and path == "/fencekit/outlets":
            with w.lock:
                return self.send(200, json.dumps(w.shown), "application/json")
        if method == "GET" and path == "/fencekit/calls":
            with w.lock:
                return self.send(200, json.dumps(w.calls), "application/json")
        if method != "POST":
            return self.send(405, "control takes POST\n", "text/plain")
        with w.lock:
            if path == "/fencekit/outlet":
                w.shown[q["n"]] = q["value"]
            elif path == "/fencekit/stuck":
                w.stuck.add(q["n"])
            elif path == "/fencekit/hang":
                w.hang = int(q.get("count", "1"))
            elif path == "/fencekit/drop":
                w.drop = int(q.get("count", "1"))
            elif path == "/fencekit/garble":
                w.garble = int(q.get("count", "1"))
            elif path != "/fencekit/reset":
                return self.send(404, "no such control\n", "text/plain")
        if path == "/fencekit/reset":
            w.reset()
        return self.send(200, "ok\n", "text/plain")

    def authorized(self):
        user = self.server.user
        if user is None:
            return True
        want = base64.b64encode(("%s:%s" % (user, self.server.password)).encode()).decode()
        return self.headers.get("Authorization", "") == "Basic " + want

    def do_POST(self):
        parts = urlsplit(self.path)
        if parts.path.startswith("/fencekit/"):
            n = int(self.headers.get("Content-Length", "0") or 0)
            if n:
                self.rfile.read(n)
            return self.control("POST", parts.path, dict(parse_qsl(parts.query)))
        return self.send(405, "<html><body>Method not allowed</body></html>\n")

    def do_GET(self):
        parts = urlsplit(self.path)
        if parts.path.startswith("/fencekit/"):
            return self.control("GET", parts.path, dict(parse_qsl(parts.query)))
        w = self.server.world
        with w.lock:
            w.calls.append("GET " + self.path)
            hang = w.hang > 0
            if hang:
                w.hang -= 1
        if hang:
            time.sleep(3600)
            return
        if parts.path != "/" + self.server.page:
            return self.send(404, "<html><body>Not found</body></html>\n")
        if not self.authorized():
            return self.send(401, "<html><body>Unauthorized</body></html>\n",
                             headers=[("WWW-Authenticate", 'Basic realm="ePowerSwitch"')])
        params = parse_qsl(parts.query, keep_blank_values=True)
        for k, v in params:
            if not re.fullmatch(r"P\d\d", k) or v not in ("0", "1") or k[1:] not in OUTLETS:
                return self.send(400, "<html><body>Bad request</body></html>\n")
        body = page(w)
        with w.lock:
            if w.garble > 0:
                w.garble -= 1
                body = "<html><body>Please log in</body></html>\n"
            drop = bool(params) and w.drop > 0
            if drop:
                w.drop -= 1
        for k, v in params:
            w.switch(k[1:], v)
        if drop:
            self.close_connection = True
            self.connection.close()
            return
        return self.send(200, body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--page", default="hidden.htm")
    ap.add_argument("--user")
    ap.add_argument("--password", default="")
    ap.add_argument("--switch-ms", type=int, default=100)
    ap.add_argument("--info")
    ap.add_argument("--log")
    a = ap.parse_args()
    srv = ThreadingHTTPServer((a.bind, a.port), Handler)
    srv.daemon_threads = True
    srv.world = World(a.switch_ms)
    srv.page = a.page
    srv.user = a.user
    srv.password = a.password
    srv.log = a.log
    info = json.dumps({"port": a.port, "bind": a.bind, "page": a.page, "user": a.user})
    if a.info:
        with open(a.info + ".tmp", "w") as f:
            f.write(info + "\n")
        import os
        os.replace(a.info + ".tmp", a.info)
    sys.stdout.write(info + "\n")
    sys.stdout.flush()
    srv.serve_forever()


if __name__ == "__main__":
    main()
