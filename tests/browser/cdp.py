"""A minimal Chrome DevTools Protocol client (Python standard library only): starts Debian's
headless Chromium, connects to its browser endpoint over a WebSocket (RFC 6455, text frames,
client masking) and sends commands to one page target. Used by the browser tests only."""
import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import time


class BrowserMissing(RuntimeError):
    pass


def find_chromium():
    # Debian's binary itself: the /usr/bin/chromium launcher script spends seconds on checks.
    if os.access("/usr/lib/chromium/chromium", os.X_OK):
        return "/usr/lib/chromium/chromium"
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise BrowserMissing("the browser tests need Chromium (Debian package chromium; scripts/test installs it: "
                         "scripts/install-packages chromium)")


class WebSocket:
    def __init__(self, url, timeout):
        m = re.match(r"ws://([^:/]+):(\d+)(/.*)", url)
        self.sock = socket.create_connection((m.group(1), int(m.group(2))), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {m.group(3)} HTTP/1.1\r\nHost: {m.group(1)}:{m.group(2)}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise RuntimeError("DevTools closed the connection during the handshake")
            head += chunk
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError("DevTools refused the WebSocket: " + head.decode(errors="replace"))

    def _exact(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise RuntimeError("DevTools closed the connection")
            data += chunk
        return data

    def send(self, text):
        payload = text.encode()
        n = len(payload)
        head = bytes([0x81])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def receive(self):
        message = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            data = self._exact(n)
            if b0 & 0x0F == 0x8:
                raise RuntimeError("DevTools closed the WebSocket")
            if b0 & 0x0F in (0x9, 0xA):  # ping, pong
                continue
            message += data
            if b0 & 0x80:
                return message.decode()


class Browser:
    """Headless Chromium with one page; `errors` collects console errors and exceptions."""

    def __init__(self, timeout=20.0, width=1200, height=1400):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="stride-chromium-")
        env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS="disabled:")
        self.proc = subprocess.Popen(
            [find_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--use-gl=swiftshader", "--enable-unsafe-swiftshader",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--window-size={width},{height}",
             f"--user-data-dir={self.profile}", "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, start_new_session=True)
        url = None
        deadline = time.time() + timeout
        while time.time() < deadline:
            line = self.proc.stderr.readline().decode(errors="replace")
            if not line and self.proc.poll() is not None:
                break
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                url = m.group(1)
                break
        if not url:
            self.close()
            raise RuntimeError("Chromium did not open its DevTools endpoint within %g s" % timeout)
        self.ws = WebSocket(url, timeout)
        self.next_id = 0
        self.events = []
        self.errors = []
        # The page Chromium opened at start (its renderer is already up).
        pages = [t for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page"]
        target = pages[0]["targetId"] if pages else self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            self.call(domain + ".enable", session=True)

    def _note(self, msg):
        method, p = msg.get("method"), msg.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.errors.append("exception: " + d.get("exception", {}).get("description", d.get("text", "")))
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.errors.append("console.error: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
        elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
            self.errors.append("log: " + p["entry"]["text"] + " " + p["entry"].get("url", ""))
        self.events.append(msg)

    def call(self, method, session=False, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        while True:
            reply = json.loads(self.ws.receive())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._note(reply)

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def open(self, url):
        """Loads url and waits for <body data-stride-ready="true"> (or an error on the page)."""
        self.call("Page.navigate", session=True, url=url)
        deadline = time.time() + self.timeout
        while time.time() < deadline:
            state = self.evaluate("document.body && document.body.dataset.strideReady === 'true' ? 'ready' : "
                                  "(document.querySelector('pre.error') ? document.querySelector('pre.error').textContent : '')")
            if state == "ready":
                return
            if state:
                raise RuntimeError(f"{url}: the page reports {state}")
            time.sleep(0.05)
        raise RuntimeError(f"{url}: not ready within {self.timeout} s (errors: {self.errors})")

    def screenshot(self, path):
        """The window (a whole-page capture costs a second more per page)."""
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)  # the browser and its helper processes (its own session)
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)
