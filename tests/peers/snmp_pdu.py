#!/usr/bin/python3
"""A simulated switched PDU for net-snmp's snmpd, through pass_persist.

usage (in snmpd.conf):  pass_persist ROOT /usr/bin/python3 snmp_pdu.py RUNDIR KIND
  KIND (ROOT): apc (.1.3.6.1.4.1.318), eaton (.1.3.6.1.4.1.534), ibmblade
  (.1.3.6.1.4.1.2.3.51), intelmodular (.1.3.6.1.4.1.343), ipdu
  (.1.3.6.1.4.1.2.6.223), emerson (.1.3.6.1.4.1.476); snmpd_start.sh picks it.

State lives in RUNDIR/state.json and is re-read on every request, so a test
can change it between requests:
  {"outlets": N, "on": [1, 2, ...], "watts": 120, "refuse": [5], "welded": [6], "names": {"3": "db01"}}
  - "on":     outlets that have power;
  - "refuse": outlets that accept a command but do not switch (a stuck relay);
  - "welded": outlets whose state follows the commands but whose relay
              never opens: they read off and still carry their load;
  - "watts":  load of an outlet that is on, or welded (0 otherwise);
  - "delay":  seconds an accepted command takes to change the state (a
              blade that shuts down, a relay with a delay); until then the
              outlet reads its old state ("pending" holds what is due).
Every set is appended to RUNDIR/ops.log as "OID VALUE".

MIB served (facts from PowerNet-MIB and EATON-EPDU-MIB as fence-agents uses them):
  apc:   rPDUOutletControlOutletCommand .318.1.1.12.3.3.1.1.4.N  (read: 1 on / 2 off; write 1 on, 2 off)
         rPDUOutletStatusOutletName     .318.1.1.12.3.5.1.1.2.N
         rPDUOutletStatusOutletState    .318.1.1.12.3.5.1.1.4.N  (1 on / 2 off)
         rPDU2OutletMeteredStatusPower  .318.1.1.26.9.4.3.1.7.N  (watts)
         sPDUOutletCtl                  .318.1.1.4.4.2.1.3.N     (1 on / 2 off, writable)
         sPDUOutletCtlName              .318.1.1.4.4.2.1.4.N
  eaton: Managed ePDU outlet table      .534.6.6.6.1.2.2.1.{1,3}.I  (I = outlet - 1; 3: 1 on / 0 off, writable)
  ibmblade: remoteControlBladePowerState .2.3.51.2.22.1.5.1.1.4.N (1 on / 0 off, read-only)
         powerOnOffBlade                .2.3.51.2.22.1.6.1.1.7.N (write 1 on / 0 off)
  intelmodular: module power            .343.2.19.1.2.10.202.1.1.6.N (reads 2 on / 0 off; write 2 on, 3 off)
  ipdu:  outlet name                    .2.6.223.8.2.2.1.2.N
         outlet state                   .2.6.223.8.2.2.1.11.N (1 on / 0 off, writable)
  emerson: receptacle name              .476.1.42.3.8.50.20.1.10.1.1.N
         receptacle power state         .476.1.42.3.8.50.20.1.95.1.1.N (2 on / 1 off, read-only)
         receptacle control             .476.1.42.3.8.50.20.1.100.1.1.N (write 1 on / 0 off)
  (the emerson table is indexed PDU.BRANCH.RECEPTACLE; this PDU is 1, branch 1)
  ifmib (roots .1.3.6.1.2.1.2 and .1.3.6.1.2.1.31; IF-MIB, RFC 2863): a switch
         ifNumber .2.1.0; per port N: ifIndex .2.2.1.1.N, ifDescr .2.2.1.2.N,
         ifAdminStatus .2.2.1.7.N (1 up / 2 down, writable), ifOperStatus
         .2.2.1.8.N (1 up / 2 down), ifName .31.1.1.1.1.N, ifAlias .31.1.1.1.18.N.
         "on" holds the ports administratively up; the link (ifOperStatus)
         follows ifAdminStatus "link_delay" seconds later (0.3 by default),
         except for ports in "nolink" (the node's NIC is off: never up) and
         "stuck" (the link reads up whatever the admin state). Names:
         "descr" / "ifname" override "GigabitEthernet1/0/N" / "Gi1/0/N".
"""
import json
import os
import sys
import time

RUN = sys.argv[1]
KIND = sys.argv[2] if len(sys.argv) > 2 else "apc"
STATE = os.path.join(RUN, "state.json")
OPS = os.path.join(RUN, "ops.log")


def load():
    with open(STATE) as f:
        st = json.load(f)
    if KIND == "ifmib":
        return st
    # Commands whose delay has passed take effect now.
    pending = st.get("pending", {})
    due = [k for k, (_, at) in pending.items() if at <= time.time()]
    if due:
        cur = set(st["on"])
        for k in due:
            want_on, _ = pending.pop(k)
            (cur.add if want_on else cur.discard)(int(k))
        st["on"] = sorted(cur)
        save(st)
    return st


def save(st):
    tmp = STATE + ".tmp"
    with open(tmp, "w") as f:
        json.dump(st, f)
    os.replace(tmp, STATE)


def oid_key(oid):
    return tuple(int(x) for x in oid.strip(".").split(".") if x)


def table(st):
    """{oid tuple: (type, value, writer)}; writer(st, value) -> error or None."""
    n = st["outlets"]
    on = set(st["on"])
    names = st.get("names", {})
    t = {}

    def switch(i, want_on):
        def w(st, value):
            if i in st.get("refuse", []):
                return None
            if st.get("delay", 0) > 0:
                st.setdefault("pending", {})[str(i)] = [
                    bool(want_on(value)), time.time() + st["delay"]]
                return None
            cur = set(st["on"])
            if want_on(value):
                cur.add(i)
            else:
                cur.discard(i)
            st["on"] = sorted(cur)
            return None
        return w

    if KIND == "ifmib":
        ifmib_rows(t, st)
    elif KIND == "apc":
        b = (1, 3, 6, 1, 4, 1, 318)
        for i in range(1, n + 1):
            state = 1 if i in on else 2
            name = names.get(str(i), "node%02d" % i)

            def writer(i=i):
                inner = switch(i, lambda v: v == 1)

                def w(st, value):
                    if value not in (1, 2):
                        return "wrong-value"
                    return inner(st, value)
                return w
            t[b + (1, 1, 12, 3, 3, 1, 1, 4, i)] = ("integer", state, writer())
            t[b + (1, 1, 12, 3, 5, 1, 1, 2, i)] = ("string", name, None)
            t[b + (1, 1, 12, 3, 5, 1, 1, 4, i)] = ("integer", state, None)
            fed = i in on or i in st.get("welded", [])
            t[b + (1, 1, 26, 9, 4, 3, 1, 7, i)] = ("integer", st.get("watts", 120) if fed else 0, None)
            t[b + (1, 1, 4, 4, 2, 1, 3, i)] = ("integer", state, writer())
            t[b + (1, 1, 4, 4, 2, 1, 4, i)] = ("string", name, None)
    elif KIND in ("ibmblade", "intelmodular", "ipdu", "emerson"):
        for i in range(1, n + 1):
            device_rows(t, i, i in on, names.get(str(i), "node%02d" % i), switch)
    else:
        b = (1, 3, 6, 1, 4, 1, 534, 6, 6, 6, 1, 2, 2, 1)
        for i in range(1, n + 1):
            idx = i - 1
            state = 1 if i in on else 0

            def writer(i=i):
                inner = switch(i, lambda v: v == 1)

                def w(st, value):
                    if value not in (0, 1):
                        return "wrong-value"
                    return inner(st, value)
                return w
            t[b + (1, idx)] = ("integer", idx, None)
            t[b + (3, idx)] = ("integer", state, writer())
    return t


def checked(allowed, inner):
    """A writer taking only `allowed` values (others: wrongValue)."""
    def w(st, value):
        if value not in allowed:
            return "wrong-value"
        return inner(st, value)
    return w


# Per kind: (state column, read on/off values, control column or None when
# the state column is written, write on/off values, names column or None,
# index prefix below each column).
DEVICES = {
    "ibmblade": ((1, 3, 6, 1, 4, 1, 2, 3, 51, 2, 22, 1, 5, 1, 1, 4), (1, 0),
                 (1, 3, 6, 1, 4, 1, 2, 3, 51, 2, 22, 1, 6, 1, 1, 7), (1, 0), None, ()),
    "intelmodular": ((1, 3, 6, 1, 4, 1, 343, 2, 19, 1, 2, 10, 202, 1, 1, 6), (2, 0),
                     None, (2, 3), None, ()),
    "ipdu": ((1, 3, 6, 1, 4, 1, 2, 6, 223, 8, 2, 2, 1, 11), (1, 0),
             None, (1, 0), (1, 3, 6, 1, 4, 1, 2, 6, 223, 8, 2, 2, 1, 2), ()),
    "emerson": ((1, 3, 6, 1, 4, 1, 476, 1, 42, 3, 8, 50, 20, 1, 95), (2, 1),
                (1, 3, 6, 1, 4, 1, 476, 1, 42, 3, 8, 50, 20, 1, 100), (1, 0),
                (1, 3, 6, 1, 4, 1, 476, 1, 42, 3, 8, 50, 20, 1, 10), (1, 1)),
}


def device_rows(t, i, is_on, name, switch):
    state_col, (r_on, r_off), control_col, (w_on, w_off), names_col, pre = DEVICES[KIND]
    idx = pre + (i,)
    state = r_on if is_on else r_off
    writer = checked((w_on, w_off), switch(i, lambda v: v == w_on))
    if control_col is None:
        t[state_col + idx] = ("integer", state, writer)
    else:
        t[state_col + idx] = ("integer", state, None)
        t[control_col + idx] = ("integer", state, writer)
    if names_col is not None:
        t[names_col + idx] = ("string", name, None)


def link_up(st, i, now):
    """ifOperStatus of port i: the admin state as it was link_delay ago."""
    if i in st.get("stuck", []):
        return True
    if i in st.get("nolink", []):
        return False
    up = i in st["on"]
    changed = st.get("changed", {}).get(str(i))
    if changed is not None and now < changed + st.get("link_delay", 0.3):
        return not up
    return up


def ifmib_rows(t, st):
    n = st["outlets"]
    now = time.time()
    descr = st.get("descr", {})
    ifname = st.get("ifname", {})
    t[(1, 3, 6, 1, 2, 1, 2, 1, 0)] = ("integer", n, None)
    b = (1, 3, 6, 1, 2, 1, 2, 2, 1)
    x = (1, 3, 6, 1, 2, 1, 31, 1, 1, 1)

    def writer(i):
        def w(st, value):
            if value not in (1, 2):
                return "wrong-value"
            cur = set(st["on"])
            was = i in cur
            (cur.add if value == 1 else cur.discard)(i)
            st["on"] = sorted(cur)
            if was != (value == 1):
                st.setdefault("changed", {})[str(i)] = time.time()
            return None
        return w

    for i in range(1, n + 1):
        t[b + (1, i)] = ("integer", i, None)
        t[b + (2, i)] = ("string", descr.get(str(i), "GigabitEthernet1/0/%d" % i), None)
        t[b + (7, i)] = ("integer", 1 if i in st["on"] else 2, writer(i))
        t[b + (8, i)] = ("integer", 1 if link_up(st, i, now) else 2, None)
        t[x + (1, i)] = ("string", ifname.get(str(i), "Gi1/0/%d" % i), None)
        t[x + (18, i)] = ("string", "node%02d" % i, None)


def dotted(k):
    return "." + ".".join(str(x) for x in k)


def answer(lines):
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()


def main():
    while True:
        cmd = sys.stdin.readline()
        if not cmd:
            return
        cmd = cmd.strip()
        if cmd == "PING":
            answer(["PONG"])
        elif cmd in ("get", "getnext"):
            key = oid_key(sys.stdin.readline())
            t = table(load())
            if cmd == "get":
                hit = key if key in t else None
            else:
                later = [k for k in t if k > key]
                hit = min(later) if later else None
            if hit is None:
                answer(["NONE"])
            else:
                typ, val, _ = t[hit]
                answer([dotted(hit), typ, str(val)])
        elif cmd == "set":
            key = oid_key(sys.stdin.readline())
            typ_val = sys.stdin.readline().strip().split(None, 1)
            st = load()
            t = table(st)
            if key not in t or t[key][2] is None:
                answer(["not-writable"])
                continue
            if typ_val[0] != "integer":
                answer(["wrong-type"])
                continue
            try:
                value = int(typ_val[1])
            except (IndexError, ValueError):
                answer(["wrong-value"])
                continue
            err = t[key][2](st, value)
            if err:
                answer([err])
                continue
            save(st)
            with open(OPS, "a") as f:
                f.write("%s %d\n" % (dotted(key), value))
            answer(["DONE"])
        elif cmd == "":
            continue
        else:
            answer(["NONE"])


if __name__ == "__main__":
    main()
