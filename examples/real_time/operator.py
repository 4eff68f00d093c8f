#!/usr/bin/env python3
"""An operator for manifests/real_time/log_crane_operator.json and crane1_operator.json
(standard library only).

Start the crane, then the operator, in two terminals:

  stride run manifests/real_time/log_crane_operator.json          # real time, 60 s
  python3 examples/real_time/operator.py                           # scripted manoeuvre
  python3 examples/real_time/operator.py --keys                    # keyboard: w/s lift, i/k jib, space stop, q quit

The log crane (--crane log, the default): the two valve set-points (spool offsets of the lift
and jib cylinders, dimensionless, held within +-0.4) go as one datagram of two little-endian
float64 every 16 ms to 127.0.0.1:50100; it prints what the crane sends back to 127.0.0.1:50101
(log height, the log's position in the grapple x and y, the lift and jib cylinder forces: five
float64).

The single crane (--crane single, with manifests/real_time/crane1_operator.json): one valve
set-point (w/s in steps of 0.005, held within +-0.04: the paper's offsets are -0.01 and +0.02)
every 10 ms to 127.0.0.1:50110; back on 127.0.0.1:50111 the cylinder length and
velocity, its force and both chamber pressures (five float64).
"""
import argparse
import os
import select
import socket
import struct
import sys
import time

# Per crane: where to send and listen, the frame (the manifest's communication interval), the
# valves sent, and the scripted manoeuvre as (start s, valve set-points).
CRANES = {
    "log": {
        "send_to": ("127.0.0.1", 50100), "listen": ("127.0.0.1", 50101), "frame": 0.016, "valves": 2,
        "step": 0.05, "limit": 0.4,
        # raise the log, swing the jib out, hold, lower
        "script": [(0.0, (0.0, 0.0)), (1.5, (0.25, 0.0)), (3.0, (0.0, -0.2)), (4.5, (0.0, 0.0)), (6.0, (-0.15, 0.0)),
                   (7.5, (0.0, 0.0))],
    },
    "single": {
        "send_to": ("127.0.0.1", 50110), "listen": ("127.0.0.1", 50111), "frame": 0.01, "valves": 1,
        # the paper's manoeuvre (Peiret 2018 Eq. 30: spool offsets -0.01, then +0.02), then hold
        "script": [(0.0, (0.0,)), (1.5, (-0.01,)), (3.0, (0.02,)), (4.5, (0.0,))],
        "step": 0.005, "limit": 0.04,
    },
}


def scripted(script, t):
    valves = script[0][1]
    for start, v in script:
        if t >= start:
            valves = v
    return list(valves)


def report(crane, t, valves, back):
    if crane == "log":
        h, gx, gy, f1, f2 = back
        return (f"t {t:6.2f} s  valves lift {valves[0]:+.2f} jib {valves[1]:+.2f}  log height {h:6.3f} m  "
                f"in grapple ({gx:+.3f}, {gy:+.3f}) m  forces lift {f1 / 1e3:8.2f} kN jib {f2 / 1e3:8.2f} kN")
    s, v, f, p1, p2 = back
    return (f"t {t:6.2f} s  valve {valves[0]:+.2f}  cylinder {s:6.4f} m at {v:+.4f} m/s  force {f / 1e3:8.2f} kN  "
            f"pressures {p1 / 1e6:6.2f} / {p2 / 1e6:6.2f} MPa")


class Keys:
    """Single key presses from the terminal, without waiting (POSIX terminals)."""

    def __init__(self):
        import termios
        import tty
        self.termios = termios
        self.fd = sys.stdin.fileno()
        self.saved = termios.tcgetattr(self.fd)
        tty.setcbreak(self.fd)

    def read(self):
        keys = ""
        while select.select([sys.stdin], [], [], 0)[0]:
            keys += os.read(self.fd, 1).decode(errors="ignore")
        return keys

    def close(self):
        self.termios.tcsetattr(self.fd, self.termios.TCSADRAIN, self.saved)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--crane", choices=sorted(CRANES), default="log", help="which operator manifest to drive")
    ap.add_argument("--keys", action="store_true", help="drive from the keyboard instead of the script")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds to run (scripted)")
    a = ap.parse_args()
    crane = CRANES[a.crane]
    out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    inp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    inp.bind(crane["listen"])
    inp.setblocking(False)
    keys = Keys() if a.keys else None
    valves = [0.0] * crane["valves"]
    d = crane["step"]
    step = {"w": (0, d), "s": (0, -d), "i": (1, d), "k": (1, -d)}
    t0 = time.monotonic()
    k = 0
    last_print = 0.0
    try:
        while True:
            t = time.monotonic() - t0
            if keys:
                for c in keys.read():
                    if c == "q":
                        return 0
                    if c in step and step[c][0] < len(valves):
                        valves[step[c][0]] += step[c][1]
                    if c == " ":
                        valves = [0.0] * len(valves)
                valves = [max(-crane["limit"], min(crane["limit"], v)) for v in valves]
            else:
                if t > a.duration:
                    return 0
                valves = scripted(crane["script"], t)
            out.sendto(struct.pack(f"<{len(valves)}d", *valves), crane["send_to"])
            latest = None
            while True:
                try:
                    data = inp.recv(64)
                except BlockingIOError:
                    break
                if len(data) == 40:
                    latest = struct.unpack("<5d", data)
            if latest and t - last_print >= 0.25:
                last_print = t
                print(report(a.crane, t, valves, latest), flush=True)
            k += 1
            time.sleep(max(0.0, t0 + k * crane["frame"] - time.monotonic()))  # absolute frame times: no drift
    finally:
        if keys:
            keys.close()


if __name__ == "__main__":
    sys.exit(main())
