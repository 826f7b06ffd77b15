"""The host side of scripts/test-page: headless Chromium, driven by Selenium through Debian's
chromedriver, against the status page of an aseqosc running in the VM (Tests/page/in-vm.sh),
reached through ALSA_VM_HOSTFWD. Asks the VM to act through files in the shared out folder
(OUT/signals/NN-WHAT, answered by OUT/done/NN-WHAT). Prints `ok - NAME` / `not ok - NAME` and
`page: N passed, M failed`; exits 1 when a check failed.

    browser.py --url http://127.0.0.1:PORT/ --out OUT --images docs/images

The page's contract (what the checks read) is in docs/TESTING.md, "The status page".
"""
import argparse
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By


# How long a wait for something that only has to happen may last: a VM emulated without KVM on
# a busy 2-core machine takes that long at worst (its share of a CPU can fall to a fifth). The
# checks that are about time measure it, and bound it, on their own.
HAPPENS = 120


def log(*words):
    print(f"browser [{time.strftime('%H:%M:%S')}]:", *words, file=sys.stderr, flush=True)


# The note the VM plays (amidi '90 3C 64') as the monitor shows it going in and going out.
IN_LINE = r"in keys: ch 1 +note-on +C4 \(60\) +vel 100"
OUT_LINE = r"out keys -> 127\.0\.0\.1:9000: /midi/keys/1/note_on ,ii i:60 i:100"

class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def report(self, good, name, detail=""):
        if good:
            self.passed += 1
            print(f"ok - {name}" + (f" ({detail})" if detail else ""), flush=True)
        else:
            self.failed += 1
            print(f"not ok - {name}" + (f": {detail}" if detail else ""), flush=True)
        return good

    def summary(self):
        print(f"page: {self.passed} passed, {self.failed} failed", flush=True)


class VM:
    """Requests to Tests/page/in-vm.sh through the folder the VM shares with this machine."""

    def __init__(self, out):
        self.out = out
        self.serial = 0

    def send(self, what, arg=""):
        self.serial += 1
        name = f"{self.serial:02d}-{what}"
        tmp = os.path.join(self.out, "signals", "." + name)
        with open(tmp, "w") as f:
            f.write(arg)
        os.rename(tmp, os.path.join(self.out, "signals", name))
        return name

    def answer(self, name, timeout=300):
        """(VM uptime when it began, when it was done, output) or None."""
        path = os.path.join(self.out, "done", name)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if os.path.exists(path):
                with open(path) as f:
                    first, _, rest = f.read().partition("\n")
                began, done = (float(x) for x in first.split())
                return began, done, rest
            time.sleep(0.02)
        return None

    def request(self, what, arg="", timeout=300):
        return self.answer(self.send(what, arg), timeout)

    def wait_ready(self, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for name in ("ready", "failed"):
                path = os.path.join(self.out, "done", name)
                if os.path.exists(path):
                    with open(path) as f:
                        return name == "ready", f.read().strip()
            time.sleep(0.2)
        return False, f"nothing from the VM in {timeout} s"


def wait_for(condition, timeout, interval=0.05):
    """The first truthy value of condition() within timeout seconds, else the last value."""
    deadline = time.time() + timeout
    while True:
        try:
            value = condition()
        except WebDriverException as error:
            value = None
            log("while waiting:", str(error).splitlines()[0])
        if value or time.time() >= deadline:
            return value
        time.sleep(interval)


def read_file(path):
    """The file's text, or "" while it does not exist."""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def http(url, method="GET", accept=None):
    """(status, content type, body) of one request from this machine."""
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    if accept:
        request.add_header("Accept", accept)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode(errors="replace")
    except OSError as error:
        return None, "", str(error)


# Everything the checks read from the page, in one round trip.
SNAPSHOT = """
const text = (root, sel) => { const e = root.querySelector(sel); return e ? e.textContent.trim() : null; };
return {
  connection: text(document, '#connection'),
  bindings: [...document.querySelectorAll('#bindings tr[data-binding]')].map(tr => ({
    name: tr.dataset.binding, direction: text(tr, 'td.direction'), state: text(tr, 'td.state'),
    target: text(tr, 'td.target')})),
  routes: [...document.querySelectorAll('#routes section[data-route]')].map(s => ({
    name: s.dataset.route, operators: text(s, '.operators'),
    destinations: [...s.querySelectorAll('li[data-destination]')].map(li => ({
      name: li.dataset.destination, text: li.textContent.trim(), state: text(li, '.state'),
      tone: li.querySelector('.state') ? li.querySelector('.state').className : null,
      counters: text(li, '.counters')}))})),
  oscInput: text(document, '#osc-input'),
  threads: text(document, '#threads'),
  counters: document.querySelectorAll('#counters dt, #counters dd').length,
  countersTag: document.querySelector('#counters') ? document.querySelector('#counters').tagName : null,
  config: text(document, '#config'),
  configTag: document.querySelector('#config') ? document.querySelector('#config').tagName : null,
  configPath: text(document, '#config-path'),
  events: [...document.querySelectorAll('#monitor-events li')].map(li => li.textContent.trim()),
  dropped: text(document, '#monitor-dropped'),
  actions: ['reload', 'panic', 'sync'].filter(a => { const b = document.querySelector('#action-' + a);
    return b && !b.hidden && b.offsetParent !== null; }),
  actionsInDOM: ['reload', 'panic', 'sync'].filter(a => document.querySelector('#action-' + a)),
  actionResult: text(document, '#action-result'),
};
"""

# Keeps each monitor frame the page's WebSocket receives, stamped as it arrives (before the
# page's own handler runs: a listener added in the constructor comes first), with the browser's
# clock in milliseconds since the epoch. Evaluated in each new document before the page's script.
WATCH_FRAMES = """
window.__frames = [];
const Native = window.WebSocket;
window.WebSocket = class extends Native {
  constructor(...args) {
    super(...args);
    this.addEventListener('message', m => {
      const at = performance.timeOrigin + performance.now();
      if (typeof m.data !== 'string') return;
      try { const d = JSON.parse(m.data); if (d.EVENTS) window.__frames.push({ at, events: d.EVENTS, read: d.READ, sent: d.SENT }); }
      catch (e) {}
    });
  }
};
"""

# Stamps each event line as it is added to the monitor, on the same clock as WATCH_FRAMES.
WATCH_EVENTS = """
window.__events = [];
const list = document.querySelector('#monitor-events');
if (!list) return false;
new MutationObserver(records => { const t = performance.timeOrigin + performance.now(); for (const r of records)
  for (const n of r.addedNodes) if (n.nodeName === 'LI') window.__events.push([t, n.textContent.trim()]); })
  .observe(list, { childList: true });
return true;
"""

UNLABELLED = """
const labelled = el => (el.getAttribute('aria-label') || '').trim() || el.getAttribute('aria-labelledby') ||
  (el.id && document.querySelector('label[for="' + el.id + '"]')) || el.closest('label');
const controls = [...document.querySelectorAll('button, input, select, textarea, [role=button]')];
return {
  count: controls.length,
  none: controls.filter(el => !labelled(el) && !(el.tagName === 'BUTTON' && el.textContent.trim()))
    .map(el => el.outerHTML.slice(0, 100)),
  textOnly: controls.filter(el => !labelled(el) && el.tagName === 'BUTTON' && el.textContent.trim())
    .map(el => '#' + el.id),
};
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--images", required=True)
    parser.add_argument("--ready-timeout", type=float, default=900)
    args = parser.parse_args()
    url = args.url.rstrip("/") + "/"
    checks = Checks()
    vm = VM(args.out)
    timings = {}
    started = time.time()

    ready, detail = vm.wait_ready(args.ready_timeout)
    timings["vm-ready-s"] = round(time.time() - started, 1)
    if not checks.report(ready, "the VM side is ready: aseqosc, oscdump and the TCP receiver running",
                         f"after {timings['vm-ready-s']} s" if ready else detail):
        vm.send("finish")
        checks.summary()
        return 1

    # OSCQuery clients (no text/html in Accept) keep getting JSON at `/`.
    status, kind, body = http(url)
    checks.report(status == 200 and "json" in kind and '"FULL_PATH"' in body,
                  "GET / without text/html in Accept is the OSCQuery JSON (FULL_PATH)",
                  f"{status} {kind} {body[:120]!r}")
    status, kind, body = http(url, accept="application/json")
    checks.report(status == 200 and "json" in kind and '"FULL_PATH"' in body,
                  "GET / with Accept: application/json is the OSCQuery JSON", f"{status} {kind}")
    status, kind, page = http(url, accept="text/html,application/xhtml+xml,*/*;q=0.8")
    with open(os.path.join(args.out, "page.html"), "w") as f:
        f.write(page)
    external = re.findall(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//[^"'\s>]+|@import|url\(\s*["']?(?:https?:)?//""", page)
    checks.report(status == 200 and "text/html" in kind and not external,
                  "GET / with Accept: text/html is the page, with nothing from elsewhere",
                  f"{status} {kind}, {len(page)} bytes" + (f", external: {external[:3]}" if external else ""))

    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,800", "--hide-scrollbars", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update"):
        options.add_argument(flag)
    t = time.time()
    driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver",
                                                               log_output=os.path.join(args.out, "chromedriver.log")))
    timings["chromium-start-s"] = round(time.time() - t, 2)
    try:
        run(driver, url, vm, checks, args, timings)
    except Exception as error:  # a check that crashed is a failure, and the VM must still be told
        checks.report(False, "the browser checks ran to the end", f"{type(error).__name__}: {error}".splitlines()[0])
        try:
            driver.save_screenshot(os.path.join(args.out, "crash.png"))
        except WebDriverException:
            pass
    finally:
        try:
            with open(os.path.join(args.out, "console.json"), "w") as f:
                json.dump(driver.get_log("browser"), f, indent=1)
        except Exception:
            pass
        driver.quit()
        vm.send("finish")
    timings["total-s"] = round(time.time() - started, 1)
    with open(os.path.join(args.out, "timings.json"), "w") as f:
        json.dump(timings, f, indent=1)
    print("timings: " + ", ".join(f"{k} {v}" for k, v in timings.items()), flush=True)
    checks.summary()
    return 0 if checks.failed == 0 else 1


def run(driver, url, vm, checks, args, timings):
    snap = lambda: driver.execute_script(SNAPSHOT)
    dump = lambda name: open(os.path.join(args.out, f"dom-{name}.json"), "w").write(json.dumps(snap(), indent=1))

    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH_FRAMES})
    t = time.time()
    driver.get(url)
    timings["page-load-s"] = round(time.time() - t, 2)
    live = wait_for(lambda: snap()["connection"] == "live", HAPPENS)
    timings["live-after-s"] = round(time.time() - t, 2)
    s = snap()
    checks.report(live, "#connection says live (the WebSocket is up)",
                  f"{timings['live-after-s']} s after the load began" if live else f"#connection: {s['connection']!r}")
    resources = driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)")
    origin = url.rstrip("/")
    foreign = [r for r in resources if not r.startswith(origin)]
    checks.report(not foreign, "the page loads nothing from another origin", f"{len(resources)} resources" + (
        f", foreign: {foreign[:3]}" if foreign else ""))

    # 1. Bindings and destinations of page.json5.
    def binding(name):
        return next((b for b in snap()["bindings"] if b["name"] == name), None)
    keys = wait_for(lambda: (b := binding("keys")) and b["state"] == "bound" and b, HAPPENS) or binding("keys")
    checks.report(bool(keys) and keys["direction"] == "input" and keys["state"] == "bound"
                  and "Virtual Raw MIDI 0-0" in (keys["target"] or ""),
                  "#bindings: input keys bound to Virtual Raw MIDI 0-0", json.dumps(keys))
    synth = binding("synth")
    checks.report(bool(synth) and synth["direction"] == "output" and synth["state"] == "bound"
                  and re.search(r"\b14:0\b.*Midi Through", synth["target"] or ""),
                  "#bindings: output synth bound to 14:0 Midi Through", json.dumps(synth))
    absent = binding("absent")
    checks.report(bool(absent) and absent["direction"] == "output" and absent["state"] == "waiting"
                  and absent["target"],
                  "#bindings: output absent waiting, and says why", json.dumps(absent))

    def destination(route, port):
        r = next((r for r in snap()["routes"] if r["name"] == route), None)
        return r and next((d for d in r["destinations"] if str(port) in (d["name"] or "") + d["text"]), None)
    udp = wait_for(lambda: (d := destination("keys", 9000)) and d["state"] == "sending" and d, HAPPENS) or destination("keys", 9000)
    checks.report(bool(udp) and udp["state"] == "sending", "#routes: route keys, UDP 127.0.0.1:9000 sending",
                  json.dumps(udp))
    tcp = wait_for(lambda: (d := destination("keys", 9001)) and d["state"] == "connected" and d, HAPPENS) or destination("keys", 9001)
    checks.report(bool(tcp) and tcp["state"] == "connected", "#routes: route keys, TCP 127.0.0.1:9001 connected",
                  json.dumps(tcp))
    lights = destination("keys", "Stage Lights")
    checks.report(bool(lights) and lights["state"] == "absent",
                  "#routes: route keys, the service 'Stage Lights' absent", json.dumps(lights))
    s = snap()
    route = next((r for r in s["routes"] if r["name"] == "keys"), {})
    checks.report(bool(route.get("operators")) and all(d["counters"] for d in route.get("destinations", [])),
                  "#routes: the operators in words and each destination's counters",
                  json.dumps({"operators": route.get("operators"), "counters": [d["counters"] for d in route.get("destinations", [])]}))
    checks.report(bool(s["oscInput"]) and "57300" in s["oscInput"], "#osc-input shows the input on 57300",
                  repr(s["oscInput"]))
    checks.report(bool(s["threads"]) and "input" in s["threads"], "#threads shows the threads' policies",
                  repr(s["threads"]))
    checks.report(s["countersTag"] == "DL" and s["counters"] > 0, "#counters is a dl with counters",
                  f"{s['countersTag']} with {s['counters']} dt/dd")
    checks.report(s["configTag"] == "PRE" and 'client: "page-test"' in (s["config"] or "")
                  and (s["configPath"] or "").endswith("page.json5"),
                  "#config is the config file's text, #config-path its path",
                  f"{s['configTag']}, path {s['configPath']!r}")
    dump("initial")
    requests_before = len(driver.execute_script("return performance.getEntriesByType('resource')"))

    # 2. A note played into the input appears in the monitor within a second of reaching the
    # daemon. Two clocks, each measuring its own side: the daemon's frame says when it read the
    # note and when it sent the frame (READ, SENT: the VM's CLOCK_MONOTONIC), the browser when
    # the frame came and when the line was added (this machine's clock). The hop between,
    # through QEMU's network, is on neither clock; the time from the host's request (the VM
    # noticing it, amidi starting) is printed in the timings, not checked.
    name_in_check = "a note played into virmidi is in #monitor-events (in and out) within 1 s of reaching aseqosc"
    checks.report(driver.execute_script(WATCH_EVENTS), "#monitor-events is there to watch")
    sent = time.time()
    name = vm.send("play")

    def note_lines():
        events = driver.execute_script("return window.__events") or []
        # The monitor's words (docs/CONFIG.md): the event as `aseqosc monitor` writes it, the
        # message as OSC text.
        into = next((e for e in events if re.fullmatch(IN_LINE, e[1])), None)
        out = next((e for e in events if re.fullmatch(OUT_LINE, e[1])), None)
        return (into, out) if into and out else None
    lines = wait_for(note_lines, HAPPENS, interval=0.02)
    answer = vm.answer(name)
    if answer:
        timings["vm-amidi-s"] = round(answer[1] - answer[0], 3)
    if lines:
        frames = driver.execute_script("return window.__frames") or []

        def way(line):
            """(seconds in aseqosc from the read to the frame, seconds in the page from the
            frame to the line), or None when no frame carried the line with its times."""
            added, text = line
            for frame in frames:
                events, reads = frame.get("events") or [], frame.get("read") or []
                if text in events and frame["at"] <= added:
                    read = reads[events.index(text)] if len(reads) == len(events) else None
                    if read is None or frame.get("sent") is None:
                        return None
                    return (frame["sent"] - read) / 1e6, (added - frame["at"]) / 1000
            return None
        ways = [way(lines[0]), way(lines[1])]
        timings["request-to-monitor-s"] = round(max(lines[0][0], lines[1][0]) / 1000 - sent, 3)
        if all(ways):
            totals = [a + b for a, b in ways]
            timings["note-to-monitor-in-s"] = round(totals[0], 3)
            timings["note-to-monitor-out-s"] = round(totals[1], 3)
            checks.report(max(totals) <= 1.0, name_in_check,
                          "; ".join(f"{side} {a:.3f} s in aseqosc (read to frame) + {b:.3f} s in the page (frame to line)"
                                    for side, (a, b) in zip(("in", "out"), ways))
                          + f"; {timings['request-to-monitor-s']} s from the host's request, "
                          f"amidi's own run {timings.get('vm-amidi-s', '?')} s: {lines[0][1]!r}, {lines[1][1]!r}")
        else:
            checks.report(False, name_in_check,
                          f"the lines came, but no EVENTS frame carried them with READ and SENT: {frames[-3:]!r}")
    else:
        events = driver.execute_script("return window.__events") or []
        # Not as the contract words it: when did lines about the note come, whatever their words?
        first = lambda side: next((e for e in events if e[1].startswith(side) and "60" in e[1]), None)
        seen = [f"{e[1]!r} after {e[0] / 1000 - sent:.3f} s" for e in (first("in "), first("out ")) if e]
        checks.report(False, name_in_check,
                      f"no line matching {IN_LINE!r} and {OUT_LINE!r} in {HAPPENS} s; "
                      f"lines about note 60: {seen}; all: {[e[1] for e in events][:6]}")
    s = snap()
    checks.report(s["dropped"] is not None and re.fullmatch(r"\d+", s["dropped"] or "x") is not None,
                  "#monitor-dropped is a number", repr(s["dropped"]))

    # The filter and the pause.
    box = driver.find_elements(By.CSS_SELECTOR, "input#monitor-filter")
    if checks.report(bool(box), "input#monitor-filter is there"):
        box[0].send_keys("note_on")
        visible = lambda: driver.execute_script(
            "return [...document.querySelectorAll('#monitor-events li')].filter(li => li.offsetParent !== null)"
            ".map(li => li.textContent.trim())")
        shown = wait_for(lambda: (v := visible()) and all("note_on" in x for x in v) and v, 10) or visible()
        checks.report(bool(shown) and all("note_on" in x for x in shown) and len(shown) < len(snap()["events"]),
                      "typing in #monitor-filter shows only the lines that match",
                      f"{len(shown)} of {len(snap()['events'])} shown")
        box[0].clear()
        driver.execute_script("const b = document.querySelector('#monitor-filter'); b.value = '';"
                              "b.dispatchEvent(new Event('input', { bubbles: true }));")
    pause = driver.find_elements(By.CSS_SELECTOR, "button#monitor-pause")
    if checks.report(bool(pause), "button#monitor-pause is there"):
        before_pressed = pause[0].get_attribute("aria-pressed")
        def monitoring():
            """oscQuery.page.monitoring in status --json: the pages whose monitor the server runs."""
            try:
                return json.loads(vm.request("status")[2])["oscQuery"]["page"]["monitoring"]
            except (TypeError, ValueError, KeyError):
                return None
        pause[0].click()
        pressed = pause[0].get_attribute("aria-pressed")
        count = len(snap()["events"])
        stopped = wait_for(lambda: monitoring() == 0, HAPPENS, interval=0.2)
        vm.request("release")
        # The release has gone through the daemon (its note-off is at oscdump) while the
        # daemon's monitor was stopped: no line of it can come.
        released = wait_for(lambda: "note_off" in read_file(os.path.join(args.out, "oscdump-9000.txt")), HAPPENS)
        during = len(snap()["events"])
        pause[0].click()
        after_pressed = pause[0].get_attribute("aria-pressed")
        resumed = wait_for(lambda: monitoring() == 1, HAPPENS, interval=0.2)
        checks.report(before_pressed == "false" and pressed == "true" and after_pressed == "false" and during == count
                      and bool(released),
                      "button#monitor-pause: aria-pressed false -> true -> false, no line added while paused",
                      f"aria-pressed {before_pressed} -> {pressed} -> {after_pressed}, lines {count} -> {during}, "
                      f"the note-off played meanwhile {'at' if released else 'NOT at'} oscdump")
        checks.report(stopped and resumed,
                      "a paused page's monitor is stopped in the daemon and runs again on resume",
                      f"status --json oscQuery.page.monitoring: 0 while paused {'seen' if stopped else 'not seen'}, "
                      f"1 after resume {'seen' if resumed else 'not seen'} (now {monitoring()})")
    else:
        vm.request("release")
    requests_after = len(driver.execute_script("return performance.getEntriesByType('resource')"))
    checks.report(requests_after == requests_before,
                  "no HTTP request while the page stays live (the WebSocket carries the updates)",
                  f"{requests_after - requests_before} requests")

    # Accessibility, and the screenshots.
    labels = driver.execute_script(UNLABELLED)
    checks.report(labels["count"] > 0 and not labels["none"], "every control has a label",
                  f"{labels['count']} controls" + (f"; labelled only by their text: {labels['textOnly']}" if labels["textOnly"] else "")
                  + (f"; unlabelled: {labels['none']}" if labels["none"] else ""))
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    inner = lambda: driver.execute_script("return window.innerWidth")
    wait_for(lambda: inner() == 390, 10)
    widths = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    checks.report(widths[1] == 390 and widths[0] <= widths[1],
                  "readable at 390 px: laid out at the phone's width (a viewport meta), nothing wider",
                  f"scrollWidth {widths[0]}, innerWidth {widths[1]}")
    os.makedirs(args.images, exist_ok=True)
    phone = os.path.join(args.images, "status-page-phone.png")
    driver.save_screenshot(phone)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
    wait_for(lambda: inner() == 1280, 10)
    desktop = os.path.join(args.images, "status-page-desktop.png")
    driver.save_screenshot(desktop)
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    checks.report(os.path.getsize(phone) > 0 and os.path.getsize(desktop) > 0,
                  "screenshots saved: phone 390x844, desktop 1280x800", f"{phone}, {desktop}")

    # 3. The TCP receiver stops: its destination turns to reconnecting.
    states = []

    def tcp_state():
        d = destination("keys", 9001)
        state = d and d["state"]
        if not states or states[-1] != state:
            states.append(state)
        return state in ("reconnecting", "connecting")
    t = time.time()
    vm.request("stop-tcp")
    turned = wait_for(tcp_state, 6)
    how = f"{time.time() - t:.1f} s after the receiver stopped, with no event sent"
    if not turned:  # a receiver that went away is noticed when the next packet is written at the latest
        vm.request("play")
        vm.request("release")
        t2 = time.time()
        turned = wait_for(tcp_state, HAPPENS)
        how = f"{time.time() - t2:.1f} s after a note sent once the receiver had stopped (nothing in 6 s without one)"
    timings["tcp-down-s"] = round(time.time() - t, 1)
    checks.report(turned, "the TCP destination whose receiver stopped turns to reconnecting/connecting",
                  f"states {states}; {how}")

    # 5. UDP destinations whose datagrams are refused: 9003, where nothing listens, says
    # `no receiver`; 9004 too, until a receiver starts there, then `sending` again once its
    # datagrams have gone unrefused for 2 s of sends. The state changes only with sends (a
    # refusal comes back as the answer to one), so notes are played until it shows.
    def udp_destination(port):
        return destination("keys", f"127.0.0.1:{port}")
    refused = re.compile(r"no receiver \(refused for (\d+[hms] ?)+, nothing got through\)")

    def play_until(condition, timeout):
        """Notes played (a tap each, one after the other) until condition() holds; its value."""
        deadline = time.time() + timeout
        while True:
            value = wait_for(condition, 0.6)
            if value or time.time() >= deadline:
                return value
            vm.request("tap")
    both = play_until(lambda: all((d := udp_destination(p)) and refused.fullmatch(d["state"] or "") for p in (9003, 9004)), HAPPENS)
    for port, why in ((9003, "nothing listens"), (9004, "no receiver yet")):
        d = udp_destination(port)
        checks.report(bool(both) and bool(d) and "bad" in (d["tone"] or "").split(),
                      f"#routes: UDP 127.0.0.1:{port} ({why}) says no receiver, as bad",
                      json.dumps(d))
    answer = vm.request("status-text")
    text = answer[2] if answer else ""
    said = {port: re.search(rf"-> 127\.0\.0\.1:{port} \([^)]*\): no receiver \(refused for [^,]+, nothing got through\); ", text)
            for port in (9003, 9004)}
    checks.report(all(said.values()), "aseqosc status says no receiver for both",
                  "; ".join(m.group(0).rstrip("; ") for m in said.values() if m) or repr(text[-600:]))

    answer = vm.request("start-late")
    started = answer is not None and "oscdump on 9004" in answer[2]
    t = time.time()
    back = play_until(lambda: (d := udp_destination(9004)) and d["state"] == "sending" and d, HAPPENS)
    timings["receiver-back-s"] = round(time.time() - t, 1)
    d = back or udp_destination(9004)
    checks.report(started and bool(back) and "good" in (d["tone"] or "").split(),
                  "#routes: UDP 127.0.0.1:9004 is sending again (good) once a receiver listens there",
                  f"{timings['receiver-back-s']} s of notes after the receiver started: {json.dumps(d)}"
                  if started else f"the VM did not start the receiver: {answer!r}")
    still = udp_destination(9003)
    checks.report(bool(still) and refused.fullmatch(still["state"] or "") is not None,
                  "#routes: UDP 127.0.0.1:9003 still says no receiver meanwhile", json.dumps(still))
    try:
        with open(os.path.join(args.out, "oscdump-9004.txt")) as f:
            got = sum("/midi/keys/1/" in line for line in f)
    except OSError:
        got = 0
    answer = vm.request("status-text")
    text = answer[2] if answer else ""
    line = next((l for l in text.splitlines() if "-> 127.0.0.1:9004 " in l), None)
    checks.report(got > 0 and bool(line) and "no receiver" not in line,
                  "the late receiver gets the notes, and aseqosc status no longer says no receiver for it",
                  f"{got} messages at oscdump -L 9004; status: {line!r}")

    # 6. Actions: GET is refused (405), a POST from outside actionsAllow too (403), both counted.
    action = url + "aseqosc/action/reload"
    get_status, _, get_body = http(action)
    checks.report(get_status == 405, "GET /aseqosc/action/reload from this machine (10.0.2.2 in the VM) is 405",
                  f"{get_status} {get_body[:80]!r}")
    answer = vm.request("curl-get", "/aseqosc/action/reload")
    local_get = answer and answer[2].strip()
    checks.report(local_get == "405", "GET /aseqosc/action/reload from the VM's loopback (allowed) is 405",
                  repr(local_get))
    post_status, _, post_body = http(action, method="POST")
    checks.report(post_status == 403, "POST /aseqosc/action/reload from 10.0.2.2 (not in actionsAllow) is 403",
                  f"{post_status} {post_body[:80]!r}")
    s = snap()
    checks.report(s["actions"] == ["reload", "panic", "sync"], "the actions the config enables are buttons",
                  f"shown {s['actions']}")
    clicked = 0
    if "reload" in s["actions"]:
        driver.find_element(By.CSS_SELECTOR, "#action-reload").click()
        clicked = 1
        result = wait_for(lambda: (r := snap()["actionResult"]) and r.startswith(("done:", "refused:")) and r, HAPPENS)
        checks.report(bool(result) and result.startswith("refused:"),
                      "#action-reload clicked from outside actionsAllow says refused", repr(result))
    answer = vm.request("status")
    try:
        status_json = json.loads(answer[2])
        with open(os.path.join(args.out, "status.json"), "w") as f:
            json.dump(status_json, f, indent=1)
        page_counts = (status_json.get("oscQuery") or {}).get("page")
    except (TypeError, ValueError, AttributeError):
        status_json, page_counts = None, None
    gets = (get_status == 405) + (local_get == "405")
    refusals = (post_status == 403) + clicked
    checks.report(isinstance(page_counts, dict) and page_counts.get("refusedGet", -1) >= gets
                  and page_counts.get("refusedNotAllowed", -1) >= refusals,
                  "status --json counts them: oscQuery.page refusedGet and refusedNotAllowed",
                  f"oscQuery.page: {json.dumps(page_counts)}, expected refusedGet >= {gets}, refusedNotAllowed >= {refusals}"
                  if status_json else f"no JSON from status: {(answer or ('', '', 'no answer'))[2][:200]!r}")

    # 4. A reload: the route renamed and one more, and the actions allowed from here.
    vm.request("reload")
    t = time.time()
    names = lambda: sorted(r["name"] for r in snap()["routes"])
    changed = wait_for(lambda: names() == ["melody", "route 2"], HAPPENS, interval=0.1)
    timings["reload-shown-s"] = round(time.time() - t, 2)
    checks.report(changed, "a reload (route renamed, one unnamed added; SIGHUP) changes the routes shown",
                  f"routes {names()} {timings['reload-shown-s']} s after the SIGHUP")
    wait_for(lambda: snap()["connection"] == "live", HAPPENS)
    s = snap()
    checks.report("melody" in (s["config"] or ""), "#config shows the reloaded file", f"{len(s['config'] or '')} characters")
    checks.report(s["actions"] == ["panic"], "after the reload only the action it enables (panic) is shown",
                  f"shown {s['actions']}; in the document, hidden or not: {s['actionsInDOM']}")
    if "panic" in s["actions"]:
        driver.execute_script("const r = document.querySelector('#action-result'); if (r) r.textContent = '';")
        driver.find_element(By.CSS_SELECTOR, "#action-panic").click()
        result = wait_for(lambda: (r := snap()["actionResult"]) and r.startswith(("done:", "refused:")) and r, HAPPENS)
        checks.report(bool(result) and result.startswith("done:"),
                      "#action-panic clicked once actionsAllow has 10.0.2.0/24 says done", repr(result))
    else:
        checks.report(False, "#action-panic clicked once actionsAllow has 10.0.2.0/24 says done", "no #action-panic")
    dump("reloaded")

    # 7. query.page: false: a browser gets the JSON too.
    vm.request("page-off")
    off = wait_for(lambda: (r := http(url, accept="text/html,*/*;q=0.8")) and "json" in r[1] and '"FULL_PATH"' in r[2] and r,
                   HAPPENS, interval=0.3)
    r = off or http(url, accept="text/html,*/*;q=0.8")
    checks.report(bool(off), "with query.page: false, GET / with Accept: text/html is the OSCQuery JSON",
                  f"{r[0]} {r[1]}")


if __name__ == "__main__":
    sys.exit(main())
