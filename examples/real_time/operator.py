#!/usr/bin/env python3
"""An operator for manifests/real_time/log_crane_operator.json (standard library only).

Start the crane, then the operator, in two terminals:

  stride run manifests/real_time/log_crane_operator.json          # real time, 60 s
  python3 examples/real_time/operator.py                           # scripted manoeuvre
  python3 examples/real_time/operator.py --keys                    # keyboard: w/s lift, i/k jib, space stop, q quit

It sends the two valve set-points (spool offsets of the lift and jib cylinders, dimensionless,
held within +-0.4) as one datagram of two little-endian float64 every 16 ms to 127.0.0.1:50100,
and prints what the crane sends back to 127.0.0.1:50101 (log height, the log's position in the
grapple x and y, the lift and jib cylinder forces: five float64).
"""
import argparse
import os
import select
import socket
import struct
import sys
import time

SEND_TO = ("127.0.0.1", 50100)
LISTEN = ("127.0.0.1", 50101)
FRAME = 0.016

# (start s, lift valve, jib valve): raise the log, swing the jib out, hold, lower.
SCRIPT = [(0.0, 0.0, 0.0), (1.5, 0.25, 0.0), (3.0, 0.0, -0.2), (4.5, 0.0, 0.0), (6.0, -0.15, 0.0), (7.5, 0.0, 0.0)]


def scripted(t):
    lift = jib = 0.0
    for start, a, b in SCRIPT:
        if t >= start:
            lift, jib = a, b
    return lift, jib


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
    ap.add_argument("--keys", action="store_true", help="drive from the keyboard instead of the script")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds to run (scripted)")
    a = ap.parse_args()
    out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    inp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    inp.bind(LISTEN)
    inp.setblocking(False)
    keys = Keys() if a.keys else None
    lift = jib = 0.0
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
                    lift += {"w": 0.05, "s": -0.05}.get(c, 0.0)
                    jib += {"i": 0.05, "k": -0.05}.get(c, 0.0)
                    if c == " ":
                        lift = jib = 0.0
                lift, jib = max(-0.4, min(0.4, lift)), max(-0.4, min(0.4, jib))
            else:
                if t > a.duration:
                    return 0
                lift, jib = scripted(t)
            out.sendto(struct.pack("<2d", lift, jib), SEND_TO)
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
                h, gx, gy, f1, f2 = latest
                print(f"t {t:6.2f} s  valves lift {lift:+.2f} jib {jib:+.2f}  log height {h:6.3f} m  "
                      f"in grapple ({gx:+.3f}, {gy:+.3f}) m  forces lift {f1 / 1e3:8.2f} kN jib {f2 / 1e3:8.2f} kN",
                      flush=True)
            k += 1
            time.sleep(max(0.0, t0 + k * FRAME - time.monotonic()))  # absolute frame times: no drift
    finally:
        if keys:
            keys.close()


if __name__ == "__main__":
    sys.exit(main())
