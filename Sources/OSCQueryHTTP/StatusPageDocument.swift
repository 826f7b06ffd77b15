/// The status page: one self-contained HTML document (its CSS and JavaScript inline, nothing
/// fetched from elsewhere, so it works on a network without internet). Its script opens a
/// WebSocket to the server it came from, asks for the status (`{"COMMAND":"STATUS"}`) and the
/// event monitor (`{"COMMAND":"MONITOR"}`, `{"COMMAND":"PAUSE"}` while paused), and renders what
/// arrives with `textContent` only: port and route names come from the config and are never
/// read as HTML.
enum StatusPageDocument {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>aseqosc</title>
        <style>
        :root { color-scheme: light dark; --fg: #1b1b1b; --bg: #fafafa; --muted: #5c5c5c; --line: #d0d0d0;
                --ok: #126b2f; --warn: #8a5300; --bad: #b00020; --panel: #ffffff; }
        @media (prefers-color-scheme: dark) {
          :root { --fg: #e8e8e8; --bg: #151515; --muted: #a8a8a8; --line: #3a3a3a; --ok: #6fd08c;
                  --warn: #f0b35a; --bad: #ff7a8a; --panel: #1e1e1e; }
        }
        * { box-sizing: border-box; }
        body { margin: 0; font: 16px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
        header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: baseline; padding: .75rem 1rem;
                 border-bottom: 1px solid var(--line); background: var(--panel); position: sticky; top: 0; }
        header h1 { font-size: 1.25rem; margin: 0; }
        main { display: grid; gap: 1rem; padding: 1rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 34rem), 1fr)); }
        section.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; min-width: 0; }
        h2 { font-size: 1.05rem; margin: 0 0 .5rem; }
        h3 { font-size: 1rem; margin: .75rem 0 .25rem; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: .25rem .5rem .25rem 0; border-bottom: 1px solid var(--line); vertical-align: top; }
        td.target { overflow-wrap: break-word; }
        .table-scroll { overflow-x: auto; }
        /* A phone has no room for four columns: each port becomes a block, its target below. */
        @media (max-width: 36rem) {
          #bindings thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
          #bindings tr { display: flex; flex-wrap: wrap; gap: 0 .75rem; padding: .35rem 0; border-bottom: 1px solid var(--line); }
          #bindings th, #bindings td { display: block; padding: 0; border: 0; }
          #bindings td.target { flex-basis: 100%; }
        }
        .muted, .counters { color: var(--muted); font-size: .9rem; }
        .state { font-weight: 600; }
        .state.good { color: var(--ok); } .state.warn { color: var(--warn); } .state.bad { color: var(--bad); }
        #connection { font-weight: 600; }
        #connection.live { color: var(--ok); } #connection.reconnecting { color: var(--bad); }
        ul { margin: .25rem 0; padding-left: 1.2rem; }
        pre.operators { white-space: pre-wrap; overflow-wrap: break-word; max-height: none; color: var(--muted); }
        pre { overflow: auto; max-height: 24rem; font-size: .85rem; background: var(--bg); padding: .5rem; border: 1px solid var(--line); }
        dl { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: 0; }
        dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
        .wide { grid-column: 1 / -1; }
        .controls { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-bottom: .5rem; }
        button, input { font: inherit; padding: .35rem .7rem; border: 1px solid var(--line); border-radius: 4px;
                        background: var(--bg); color: var(--fg); min-height: 2.5rem; }
        button:focus-visible, input:focus-visible { outline: 3px solid #3b78e7; outline-offset: 2px; }
        button[aria-pressed="true"] { background: var(--warn); color: #000; }
        #monitor-events { font: .85rem/1.35 ui-monospace, monospace; max-height: 22rem; overflow: auto; margin: 0;
                          padding-left: 0; list-style: none; border: 1px solid var(--line); }
        #monitor-events li { padding: .05rem .4rem; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
        #monitor-events li.out { color: var(--muted); }
        </style>
        </head>
        <body>
        <header>
          <h1>aseqosc <span id="client"></span></h1>
          <span class="muted" id="version"></span>
          <span>Connection: <span id="connection" role="status" aria-live="polite">connecting</span></span>
        </header>
        <main>
          <section class="panel" aria-labelledby="bindings-title">
            <h2 id="bindings-title">ALSA ports</h2>
            <div class="table-scroll">
            <table id="bindings">
              <thead><tr><th scope="col">Port</th><th scope="col">Direction</th><th scope="col">State</th><th scope="col">Bound to</th></tr></thead>
              <tbody></tbody>
            </table>
            </div>
          </section>
          <section class="panel" aria-labelledby="routes-title">
            <h2 id="routes-title">Routes</h2>
            <div id="routes"></div>
          </section>
          <section class="panel" aria-labelledby="osc-title">
            <h2 id="osc-title">OSC input</h2>
            <p id="osc-input" class="muted">none</p>
            <h3>Threads</h3>
            <p id="threads" class="muted"></p>
          </section>
          <section class="panel" aria-labelledby="counters-title">
            <h2 id="counters-title">Counters</h2>
            <dl id="counters"></dl>
            <div id="actions" hidden>
              <h3>Actions</h3>
              <div class="controls">
                <button type="button" id="action-reload" data-action="reload" hidden>Reload config</button>
                <button type="button" id="action-panic" data-action="panic" hidden>Panic: all notes off</button>
                <button type="button" id="action-sync" data-action="sync" hidden>Send last values again</button>
              </div>
              <p id="action-result" role="status" aria-live="polite" class="muted"></p>
            </div>
          </section>
          <section class="panel wide" aria-labelledby="monitor-title">
            <h2 id="monitor-title">Monitor</h2>
            <div class="controls">
              <button type="button" id="monitor-pause" aria-pressed="false">Pause</button>
              <label for="monitor-filter">Filter</label>
              <input id="monitor-filter" type="search" placeholder="e.g. note on, keys, /midi" aria-label="Filter events">
              <span class="muted">not shown: <span id="monitor-dropped">0</span></span>
            </div>
            <ol id="monitor-events" aria-label="Events, newest last" aria-live="off"></ol>
          </section>
          <section class="panel wide" aria-labelledby="config-title">
            <h2 id="config-title">Config in force</h2>
            <p class="muted" id="config-path"></p>
            <pre id="config"></pre>
          </section>
        </main>
        <script>
        "use strict";
        const $ = (id) => document.getElementById(id);
        const maxEvents = 500;
        let paused = false, dropped = 0, socket = null, retry = 1000;

        function element(tag, text, className) {
          const node = document.createElement(tag);
          if (text !== undefined) node.textContent = text;
          if (className) node.className = className;
          return node;
        }

        function duration(seconds) {
          const whole = Math.floor(seconds);
          if (whole >= 3600) return `${Math.floor(whole / 3600)}h ${Math.floor(whole / 60) % 60}m`;
          return whole >= 60 ? `${Math.floor(whole / 60)}m ${whole % 60}s` : `${whole}s`;
        }

        // The words for a destination's state, from status's fields: a TCP link's state
        // (`waiting` is between retries), a service's whereabouts (`serviceAt`), datagrams
        // refused (nothing listens there), else UDP sending.
        function destinationState(d) {
          if (d.tcp) {
            if (d.tcp.state === "connected") return ["connected", "good"];
            if (d.tcp.state === "connecting") return ["connecting", "warn"];
            return ["reconnecting", "bad"];
          }
          if (d.serviceAt === "absent") return ["absent", "bad"];
          if (d.refusedSeconds != null) {
            const through = d.lastThroughSeconds != null ? `last got through ${duration(d.lastThroughSeconds)} ago` : "nothing got through";
            return [`no receiver (refused for ${duration(d.refusedSeconds)}, ${through})`, "bad"];
          }
          if (d.serviceAt != null) return [`found at ${d.serviceAt}`, "good"];
          return ["sending", "good"];
        }

        function renderBindings(bindings) {
          const body = $("bindings").tBodies[0];
          body.replaceChildren();
          for (const b of bindings) {
            const row = element("tr");
            row.dataset.binding = b.port;
            row.append(element("th", b.port));
            row.firstChild.scope = "row";
            row.append(element("td", b.direction === "in" ? "input" : "output", "direction"));
            const waiting = b.connected.length === 0;
            row.append(element("td", waiting ? "waiting" : "bound", "state " + (waiting ? "warn" : "good")));
            row.append(element("td", waiting ? (b.waiting || b.spec) : b.connected.join(", "), "target"));
            body.append(row);
          }
        }

        function renderRoutes(routes, pageRoutes) {
          const box = $("routes");
          box.replaceChildren();
          for (const r of routes) {
            const section = element("section");
            section.dataset.route = r.name;
            section.append(element("h3", r.name));
            const words = (pageRoutes.find((p) => p.name === r.name) || {}).operators || [];
            // As `aseqosc check` writes the chain: `| operator`, `-> destination`, branches indented.
            section.append(element("pre", words.length ? words.join("\n") : "no operators", "operators"));
            section.append(element("p", `in ${r.eventsIn}, passed ${r.passed}, filtered ${r.droppedByFilter}, throttled ${r.throttled}`, "counters"));
            const list = element("ul");
            for (const d of r.destinations) {
              const item = element("li");
              item.dataset.destination = d.address;
              const [state, tone] = destinationState(d);
              item.append(element("span", d.address + " "), element("span", state, "state " + tone));
              const extra = [`${d.packetsSent} packets`, `${d.bytesSent} bytes`];
              for (const [k, v] of Object.entries(d.errors || {})) extra.push(`${k} ${v}`);
              if (d.tcp) extra.push(`${d.tcp.reconnects} reconnects`, `${d.tcp.queued} queued`);
              if (d.recovery) extra.push(`recovery ${d.recovery}`);
              if (d.sync) extra.push(`sync on ${d.sync}: ${d.replayed} replayed`);
              item.append(element("div", extra.join(", "), "counters"));
              list.append(item);
            }
            section.append(list);
            box.append(section);
          }
          if (!routes.length) box.append(element("p", "no routes", "muted"));
        }

        function renderCounters(s) {
          const dl = $("counters");
          dl.replaceChildren();
          const add = (name, value) => { dl.append(element("dt", name), element("dd", String(value))); };
          add("up", `${Math.round(s.uptimeSeconds)} s`);
          if (s.eventsIn !== undefined) add("events in", s.eventsIn);
          if (s.inputOverruns !== undefined) add("input overruns", s.inputOverruns);
          if (s.oscInput) {
            add("OSC messages", s.oscInput.messages);
            add("OSC malformed", Object.values(s.oscInput.malformed || {}).reduce((a, b) => a + b, 0));
            add("OSC unknown addresses", s.oscInput.unknownAddresses);
            add("OSC not allowed", s.oscInput.notAllowed);
          }
          if (s.oscQuery && s.oscQuery.webSocket) add("WebSocket clients", s.oscQuery.webSocket.open);
          if (s.oscQuery && s.oscQuery.page) {
            add("page actions refused (GET)", s.oscQuery.page.refusedGet);
            add("page actions refused (network)", s.oscQuery.page.refusedNotAllowed);
          }
        }

        function render(s) {
          $("client").textContent = `'${s.client}'`;
          $("version").textContent = `${s.version}, up ${Math.round(s.uptimeSeconds)} s`;
          renderBindings(s.bindings || []);
          const page = s.page || {};
          renderRoutes(s.routes || [], page.routes || []);
          const o = s.oscInput;
          $("osc-input").textContent = o
            ? `${o.listen}: ${o.packets} packets, ${o.messages} messages, ${o.translated} translated` +
              (o.outputs || []).map((p) => `; to '${p.name}' ${p.sent} sent`).join("")
            : "none";
          const rt = s.realtime || {};
          $("threads").textContent = (rt.threads || [])
            .map((t) => `${t.name}: ${t.policy}${t.priority ? " " + t.priority : ""}${t.cpu !== undefined ? " on CPU " + t.cpu : ""}`)
            .join(", ") + (rt.memoryLocked ? "; memory locked" : "");
          renderCounters(s);
          $("config-path").textContent = page.configPath || "";
          $("config").textContent = page.config || "";
          const actions = page.actions || [];
          $("actions").hidden = actions.length === 0;
          for (const button of document.querySelectorAll("[data-action]")) button.hidden = !actions.includes(button.dataset.action);
        }

        function addEvents(lines) {
          if (paused) { dropped += lines.length; $("monitor-dropped").textContent = dropped; return; }
          const list = $("monitor-events");
          const filter = $("monitor-filter").value.trim().toLowerCase();
          const stick = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
          for (const line of lines) {
            const item = element("li", line, line.startsWith("out ") ? "out" : "in");
            if (filter && !line.toLowerCase().includes(filter)) item.hidden = true;
            list.append(item);
          }
          while (list.childElementCount > maxEvents) list.firstElementChild.remove();
          if (stick) list.scrollTop = list.scrollHeight;
        }

        function connect() {
          socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/`);
          socket.onopen = () => {
            retry = 1000;
            $("connection").textContent = "live";
            $("connection").className = "live";
            socket.send(JSON.stringify({ COMMAND: "STATUS" }));
            if (!paused) socket.send(JSON.stringify({ COMMAND: "MONITOR" }));
          };
          socket.onmessage = (message) => {
            if (typeof message.data !== "string") return;
            const data = JSON.parse(message.data);
            if (data.STATUS) render(data.STATUS);
            if (data.EVENTS) {
              addEvents(data.EVENTS);
              if (data.DROPPED) { dropped += data.DROPPED; $("monitor-dropped").textContent = dropped; }
            }
          };
          socket.onclose = () => {
            $("connection").textContent = "reconnecting";
            $("connection").className = "reconnecting";
            setTimeout(connect, retry);
            retry = Math.min(retry * 2, 5000);
          };
        }

        $("monitor-pause").addEventListener("click", (event) => {
          paused = !paused;
          event.currentTarget.setAttribute("aria-pressed", String(paused));
          event.currentTarget.textContent = paused ? "Resume" : "Pause";
          // Paused, the server stops copying events for this page: the music carries nothing of it.
          if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ COMMAND: paused ? "PAUSE" : "MONITOR" }));
        });
        $("monitor-filter").addEventListener("input", () => {
          const filter = $("monitor-filter").value.trim().toLowerCase();
          for (const item of $("monitor-events").children) item.hidden = filter !== "" && !item.textContent.toLowerCase().includes(filter);
        });
        for (const button of document.querySelectorAll("[data-action]")) {
          button.addEventListener("click", async () => {
            const action = button.dataset.action;
            $("action-result").textContent = `${action}...`;
            try {
              const answer = await fetch(`/aseqosc/action/${action}`, { method: "POST" });
              $("action-result").textContent = (await answer.text()).trim();
            } catch (error) {
              $("action-result").textContent = `refused: ${error}`;
            }
          });
        }
        connect();
        </script>
        </body>
        </html>
        """#
}
