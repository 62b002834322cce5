#!/usr/bin/env python3
"""An HPE iLO speaking RIBCL (Remote Insight Board Command Language) over TLS,
written from HPE's RIBCL scripting reference, for tests/interop_ilo.rs and
bench/ilo.sh: fencekit's fence_ilo / ilo:// and upstream's fence_ilo (which
talks to it through gnutls-cli) run against it side by side.

The dialogue, as the reference describes it: the client opens TLS on the
port (443 on a real iLO) and writes XML documents, each `<?xml
version="1.0"?>` then `<RIBCL VERSION="2.0">`, `<LOGIN USER_LOGIN=..
PASSWORD=..>`, sections `<SERVER_INFO MODE="read|write">` and `<RIB_INFO
MODE=..>` holding commands, `</LOGIN>`, `</RIBCL>`. The iLO answers as it
reads: a whole document (`<?xml ...?><RIBCL VERSION="x.yy"><RESPONSE
STATUS="0x0000" MESSAGE='No error'/>...</RIBCL>`) for the header and for
each command; a refused login is answered STATUS="0x005F" and the
connection closed; `</RIBCL>` ends the connection.

Commands: GET_FW_VERSION, GET_HOST_POWER_STATUS, GET_HOST_DATA (SMBIOS
record type 1: UUID, serial), SET_HOST_POWER HOST_POWER="Yes|No" (and
upstream's "on|off"), HOLD_PWR_BTN [TOGGLE="yes"] (not known to a firmware
below RIBCL 2.21: the peer's assumption, mirroring upstream's rule that
such firmware is switched with SET_HOST_POWER), PRESS_PWR_BTN, RESET_SERVER.
A power change takes --power-ms before status shows it.

The same port answers HTTPS control requests (a first line starting GET
or POST), curl-friendly, JSON:
  GET  /fencekit/state     power, flavour, calls, logins (ok/refused)
  POST /fencekit/set?power=ON|OFF&ribcl=2.22&processor=iLO2&fw=1.50&ms=N&stuck=0|1
  POST /fencekit/reset
--silent-port listens too and accepts TCP without ever answering (not even
the TLS handshake): a device that never answers.

Run: ribcl_peer.py --port P --cert C --key K [--bind ADDR] [--info FILE]
     [--log FILE] [--power-ms N] [--flavour old|ilo2|ilo3]
"""

import argparse
import json
import os
import re
import socket
import ssl
import threading
import time
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import quoteattr

import hvpeer

USER, PASSWORD = "admin", "ilo-secret"
UUID = "34313236-3934-5553-4537-31394b415a33"
SERIAL = "USE719KAZ3"
FLAVOURS = {
    # iLO (1) firmware whose RIBCL is below 2.21
    "old": {"ribcl": "2.20", "processor": "iLO", "fw": "1.70"},
    # iLO 2
    "ilo2": {"ribcl": "2.22", "processor": "iLO2", "fw": "1.50"},
    # iLO 3 / 4 speaking RIBCL 2.x >= 2.21
    "ilo3": {"ribcl": "2.30", "processor": "iLO3", "fw": "1.88"},
}
TAG = re.compile(rb"<(\?xml[^>]*\?|/?)\s*([A-Za-z_][A-Za-z0-9_.]*)?((?:\s+[A-Za-z_][A-Za-z0-9_]*\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)\s*(/?)>", re.S)
ATTR = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(\"[^\"]*\"|'[^']*')")


def unescape(v):
    return v.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&apos;", "'").replace("&amp;", "&")


class World:
    def __init__(self, power_ms, flavour):
        self.lock = threading.Lock()
        self.power_ms0, self.flavour0 = power_ms, flavour
        self.reset()

    def reset(self):
        self.power_ms = self.power_ms0
        self.flavour = dict(FLAVOURS[self.flavour0])
        self.power = "ON"
        self.pending = None  # (target, at)
        self.stuck = False
        self.calls = {}
        self.logins = {"ok": 0, "refused": 0}

    def settle(self):
        if self.pending and time.monotonic() >= self.pending[1]:
            self.power = self.pending[0]
            self.pending = None

    def change(self, target):
        self.settle()
        if self.stuck or (self.pending is None and self.power == target):
            return
        self.pending = (target, time.monotonic() + self.power_ms / 1000.0)

    def state(self):
        self.settle()
        return {"power": self.power, "pending": self.pending[0] if self.pending else None,
                "flavour": self.flavour, "calls": dict(self.calls), "logins": dict(self.logins),
                "stuck": self.stuck, "ms": self.power_ms}


def doc(version, status="0x0000", message="No error", body=""):
    return ('<?xml version="1.0"?>\r\n<RIBCL VERSION="%s">\r\n<RESPONSE\r\n    STATUS="%s"\r\n'
            "    MESSAGE='%s'\r\n     />\r\n%s</RIBCL>\r\n" % (version, status, message, body)).encode()


class Session:
    """One RIBCL connection: tags handled as they arrive."""

    def __init__(self, world, conn, log):
        self.w, self.c, self.log = world, conn, log
        self.user = None
        self.mode = None
        self.closed = False

    def send(self, b):
        self.c.sendall(b)

    def tag(self, head, name, attrs, empty):
        w = self.w
        with w.lock:
            ver = w.flavour["ribcl"]
        if head.startswith("?xml"):
            self.send(doc(ver))
            return
        closing = head == "/"
        name = (name or "").upper()
        a = {k.upper(): unescape(v[1:-1]) for k, v in ATTR.findall(attrs)}
        if closing:
            if name == "LOGIN":
                self.user = None
            elif name in ("SERVER_INFO", "RIB_INFO"):
                self.mode = None
            elif name == "RIBCL":
                self.closed = True
            return
        if name == "RIBCL":
            return
        if name == "LOGIN":
            with w.lock:
                ok = a.get("USER_LOGIN") == USER and a.get("PASSWORD") == PASSWORD
                w.logins["ok" if ok else "refused"] += 1
            if not ok:
                self.send(doc(ver, "0x005F", "Login credentials rejected."))
                self.closed = True
                return
            self.user = a.get("USER_LOGIN")
            return
        if name in ("SERVER_INFO", "RIB_INFO"):
            self.mode = a.get("MODE", "").lower()
            return
        if self.user is None:
            self.send(doc(ver, "0x0001", "Syntax error: %s outside LOGIN." % name))
            return
        with w.lock:
            w.calls[name] = w.calls.get(name, 0) + 1
            self.command(ver, name, a)

    def command(self, ver, name, a):
        w = self.w
        writes = ("SET_HOST_POWER", "HOLD_PWR_BTN", "PRESS_PWR_BTN", "RESET_SERVER")
        if name in writes and self.mode != "write":
            return self.send(doc(ver, "0x0023", "Script requires write mode."))
        if name == "GET_FW_VERSION":
            f = w.flavour
            return self.send(doc(ver, body='<GET_FW_VERSION\r\n    FIRMWARE_VERSION = "%s"\r\n'
                                 '    FIRMWARE_DATE = "Jan 21 2010"\r\n    MANAGEMENT_PROCESSOR = "%s"\r\n'
                                 '    LICENSE_TYPE = "iLO Advanced"\r\n    />\r\n' % (f["fw"], f["processor"])))
        if name == "GET_HOST_POWER_STATUS":
            w.settle()
            return self.send(doc(ver, body='<GET_HOST_POWER\r\n    HOST_POWER="%s"\r\n    />\r\n' % w.power))
        if name == "GET_HOST_DATA":
            return self.send(doc(ver, body='<GET_HOST_DATA>\r\n<SMBIOS_RECORD TYPE="0" B64_DATA="AA==">\r\n'
                                 '<FIELD NAME="Date" VALUE="11/02/2009"/>\r\n</SMBIOS_RECORD>\r\n'
                                 '<SMBIOS_RECORD TYPE="1" B64_DATA="AQ==">\r\n'
                                 '<FIELD NAME="Subject" VALUE="System Information"/>\r\n'
                                 '<FIELD NAME="Product Name" VALUE="ProLiant DL380 G5"/>\r\n'
                                 '<FIELD NAME="Serial Number" VALUE="%s"/>\r\n'
                                 '<FIELD NAME="UUID" VALUE="%s"/>\r\n</SMBIOS_RECORD>\r\n'
                                 '</GET_HOST_DATA>\r\n' % (SERIAL, UUID.upper())))
        old = float(w.flavour["ribcl"]) < 2.21
        if name == "SET_HOST_POWER":
            v = a.get("HOST_POWER", "").lower()
            if v in ("yes", "on", "y"):
                w.change("ON")
            elif v in ("no", "off", "n"):
                w.change("OFF")
            else:
                return self.send(doc(ver, "0x0004", "The value of HOST_POWER is invalid."))
            return self.send(doc(ver))
        if name == "HOLD_PWR_BTN" and not old:
            w.settle()
            if a.get("TOGGLE", "").lower() == "yes" and w.power == "OFF" and not w.pending:
                w.change("ON")
            else:
                w.change("OFF")
            return self.send(doc(ver))
        if name == "PRESS_PWR_BTN":
            w.settle()
            w.change("OFF" if w.power == "ON" else "ON")
            return self.send(doc(ver))
        if name == "RESET_SERVER":
            w.settle()
            if w.power != "ON":
                return self.send(doc(ver, "0x0002", "Server is currently powered off."))
            return self.send(doc(ver))
        return self.send(doc(ver, "0x0001", "Syntax error: unknown command %s." % name))

    def run(self, first):
        buf = first
        while not self.closed:
            while True:
                m = TAG.search(buf)
                if not m:
                    break
                buf = buf[m.end():]
                self.tag(m.group(1).decode(), (m.group(2) or b"").decode(), m.group(3).decode(errors="replace"),
                         m.group(4) == b"/")
                if self.closed:
                    return
            if len(buf) > 65536:
                return
            d = self.c.recv(65536)
            if not d:
                return
            if self.log:
                self.log.write("%s %s\n" % (time.strftime("%H:%M:%S"),
                                            re.sub(rb'PASSWORD\s*=\s*"[^"]*"', b'PASSWORD="***"', d)[:200]))
                self.log.flush()
            buf += d


def control(world, conn, first):
    data = first
    while b"\r\n\r\n" not in data and len(data) < 65536:
        d = conn.recv(65536)
        if not d:
            break
        data += d
    line = data.split(b"\r\n", 1)[0].decode(errors="replace").split()
    method, target = (line + ["", ""])[:2]
    u = urlsplit(target)
    q = {k: v[-1] for k, v in parse_qs(u.query).items()}
    status, out = 200, None
    with world.lock:
        if u.path == "/fencekit/state":
            out = world.state()
        elif u.path == "/fencekit/reset" and method == "POST":
            world.reset()
            out = {"ok": True}
        elif u.path == "/fencekit/set" and method == "POST":
            if "power" in q:
                world.power, world.pending = q["power"].upper(), None
            for k in ("ribcl", "processor", "fw"):
                if k in q:
                    world.flavour[k] = q[k]
            if "flavour" in q:
                world.flavour = dict(FLAVOURS[q["flavour"]])
            if "ms" in q:
                world.power_ms = int(q["ms"])
            if "stuck" in q:
                world.stuck = q["stuck"] == "1"
            out = {"ok": True}
        else:
            status, out = 404, {"error": "no such control"}
    raw = json.dumps(out).encode()
    conn.sendall(b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                 % (status, len(raw)) + raw)


def handle(world, ctx, raw, log):
    try:
        raw.settimeout(60)
        # Each answer document is its own write: without this, Nagle holds
        # the second one for the client's delayed ACK (40 ms a document).
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = ctx.wrap_socket(raw, server_side=True)
        first = conn.recv(65536)
        if first.startswith((b"GET ", b"POST ")):
            control(world, conn, first)
        elif first:
            Session(world, conn, log).run(first)
        try:
            conn.unwrap()
        except (OSError, ssl.SSLError):
            pass
    except (OSError, ssl.SSLError):
        pass
    finally:
        try:
            raw.close()
        except OSError:
            pass


def silent(sock):
    held = []
    while True:
        c, _ = sock.accept()
        held.append(c)


def main():
    ap = argparse.ArgumentParser()
    hvpeer.server_args(ap, port=None)
    ap.add_argument("--power-ms", type=int, default=300)
    ap.add_argument("--flavour", choices=sorted(FLAVOURS), default="ilo2")
    a = ap.parse_args()
    world = World(a.power_ms, a.flavour)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(a.cert, a.key)
    log = open(a.log, "a") if a.log else None
    srv = socket.create_server((a.bind, a.port), reuse_port=False, backlog=64)
    quiet = socket.create_server((a.bind, 0), backlog=64)
    threading.Thread(target=silent, args=(quiet,), daemon=True).start()
    line = json.dumps({"host": a.bind, "port": srv.getsockname()[1], "silent_port": quiet.getsockname()[1],
                       "user": USER, "password": PASSWORD, "uuid": UUID, "serial": SERIAL,
                       "cert": os.path.abspath(a.cert), "pid": os.getpid()})
    hvpeer.write_info(a.info, line)
    print(line, flush=True)
    try:
        while True:
            c, _ = srv.accept()
            threading.Thread(target=handle, args=(world, ctx, c, log), daemon=True).start()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
