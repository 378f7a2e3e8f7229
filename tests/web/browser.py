"""A headless Chromium driven over the DevTools protocol through a pipe (--remote-debugging-pipe:
commands on fd 3, replies on fd 4, each a JSON text ended by a NUL byte), and a local web server
for a folder: what the page's tests need, from Debian's chromium and Python's standard library."""
import atexit
import base64
import ctypes
import functools
import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading

FLAGS = ["--headless=new", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
         "--remote-debugging-pipe", "--no-first-run", "--no-default-browser-check", "--mute-audio",
         "--disable-dev-shm-usage"]  # a container's small /dev/shm would crash it


class PageError(RuntimeError):
    """An exception thrown by JavaScript evaluated in the page."""


class Server:
    """Serves `folder` on 127.0.0.1 at an unused port, as `python3 -m http.server` does."""

    def __init__(self, folder):
        handler = functools.partial(QuietHandler, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _die_with_parent():
    """In the child: SIGKILL when the test's process dies, however it dies (prctl PR_SET_PDEATHSIG)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)


class Browser:
    """One Chromium process; open() gives a Tab with its console recorded. It ends with close(), at
    the test's exit, or when the test's process dies."""

    def __init__(self, executable="chromium", width=1800, height=1500, flags=()):
        self.profile = tempfile.mkdtemp(prefix="nbody-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        # The child's fd 3 reads our commands and its fd 4 writes its replies (bash places them: dash
        # takes one-digit descriptors only).
        self.proc = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{to_chrome_r} 4>&{from_chrome_w}', executable, *FLAGS, *flags,
             f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"],
            pass_fds=(to_chrome_r, from_chrome_w), preexec_fn=_die_with_parent, start_new_session=True,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        atexit.register(self.close)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._next = 0
        self._replies = {}
        self._events = []
        self._cv = threading.Condition()
        self._closed = False
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self):
        with self.proc.stderr:
            self.stderr = self.proc.stderr.read().decode(errors="replace")

    def _read(self):
        buf = b""
        with os.fdopen(self._from_chrome, "rb", buffering=0) as f:
            while chunk := f.read(1 << 16):
                buf += chunk
                buf = self._dispatch(buf)
        with self._cv:
            self._closed = True
            self._cv.notify_all()

    def _dispatch(self, buf):
        """Records every whole message in `buf`; returns the unfinished rest."""
        *messages, rest = buf.split(b"\0")
        with self._cv:
            for m in messages:
                msg = json.loads(m)
                if "id" in msg:
                    self._replies[msg["id"]] = msg
                else:
                    self._events.append(msg)
            self._cv.notify_all()
        return rest

    def send(self, method, params=None, session=None, timeout=120):
        with self._cv:
            self._next += 1
            ident = self._next
        msg = {"id": ident, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        with self._cv:
            if not self._cv.wait_for(lambda: ident in self._replies or self._closed, timeout):
                raise TimeoutError(f"{method}: no reply in {timeout} s")
            if ident not in self._replies:
                raise RuntimeError(f"{method}: chromium exited ({getattr(self, 'stderr', '')[-2000:]})")
            reply = self._replies.pop(ident)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    def events(self, session):
        with self._cv:
            return [e for e in self._events if e.get("sessionId") == session]

    def wait_event(self, session, method, after, timeout=120):
        """The first event `method` of `session` past the first `after` events recorded."""
        def found():
            mine = [e for e in self._events if e.get("sessionId") == session]
            return next((e for e in mine[after:] if e["method"] == method), None)
        with self._cv:
            if not self._cv.wait_for(lambda: found() or self._closed, timeout) or not found():
                raise TimeoutError(f"no {method} in {timeout} s")
            return found()

    def open(self, url, before=None):
        """A new tab at `url`; `before`, when given, is JavaScript run in the page before its own."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            self.send(f"{domain}.enable", session=session)
        if before:
            self.send("Page.addScriptToEvaluateOnNewDocument", {"source": before}, session=session)
        tab = Tab(self, session)
        tab.navigate(url)
        return tab

    def close(self):
        if self.proc.poll() is None:
            try:
                self.send("Browser.close", timeout=10)
                self.proc.wait(timeout=20)
            except Exception:
                pass
        try:
            os.killpg(self.proc.pid, 9)  # its helper processes too
        except ProcessLookupError:
            pass
        self.proc.wait()
        if self._to_chrome is not None:
            os.close(self._to_chrome)
            self._to_chrome = None
        shutil.rmtree(self.profile, ignore_errors=True)


class Tab:
    def __init__(self, browser, session):
        self.browser, self.session = browser, session

    def send(self, method, params=None, timeout=120):
        return self.browser.send(method, params, self.session, timeout)

    def navigate(self, url):
        """Loads `url` and waits for its load event."""
        seen = len(self.browser.events(self.session))
        self.send("Page.navigate", {"url": url})
        self.browser.wait_event(self.session, "Page.loadEventFired", seen)

    def evaluate(self, expression, timeout=300):
        """The value of `expression` (awaited when it is a promise), as JSON makes it."""
        r = self.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                           "returnByValue": True}, timeout)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise PageError(d.get("exception", {}).get("description") or d.get("text"))
        return r["result"].get("value")

    def call(self, function, *args, timeout=300):
        """`function` (JavaScript source) applied to the JSON-able args."""
        return self.evaluate(f"({function})(...{json.dumps(args)})", timeout)

    def screenshot(self, path, element=None):
        """The whole page, or the element of that id, as a PNG file."""
        if element:
            box = self.evaluate(f"(() => {{ const r = document.getElementById({json.dumps(element)})"
                                ".getBoundingClientRect(); return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })()")
            clip = {"x": box[0], "y": box[1], "width": box[2], "height": box[3], "scale": 1}
        else:
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        png = base64.b64decode(self.send("Page.captureScreenshot", {"format": "png", "clip": clip,
                                                                    "captureBeyondViewport": True})["data"])
        with open(path, "wb") as f:
            f.write(png)
        return path

    def console(self, levels=("error",)):
        """Console messages, uncaught exceptions and browser log entries at `levels`, as text."""
        out = []
        for e in self.browser.events(self.session):
            p = e.get("params", {})
            if e["method"] == "Runtime.consoleAPICalled" and p.get("type") in levels:
                out.append(f"console.{p['type']}: " + " ".join(str(a.get("value", a.get("description")))
                                                             for a in p.get("args", [])))
            elif e["method"] == "Runtime.exceptionThrown" and "error" in levels:
                d = p["exceptionDetails"]
                out.append("uncaught: " + (d.get("exception", {}).get("description") or d.get("text", "")))
            elif e["method"] == "Log.entryAdded" and p["entry"].get("level") in levels:
                out.append(f"log.{p['entry']['level']}: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        return out
