// MergeGuard web UI: a paste-a-diff form, a live review page fed by the
// Server-Sent Events stream of /reviews/{id}/stream, and the learnings
// page's forms. No build step.
(function () {
  "use strict";

  const STAGES = ["planner", "reviewer", "verifier", "reporter"];
  // The page's CSRF token, sent back on every state-changing request. The
  // browser's session cookie (see /signin) authorises the requests; the
  // scripts never hold the API token.
  function csrfHeaders() {
    const m = document.querySelector('meta[name="csrf-token"]');
    return m ? { "X-CSRF-Token": m.content } : {};
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // Times are rendered in the server's zone; show them in the reader's.
  document.querySelectorAll("time[datetime]").forEach(function (t) {
    const d = new Date(t.getAttribute("datetime"));
    if (isNaN(d)) return;
    t.title = t.getAttribute("datetime");
    t.textContent = d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
  });

  // ---- new review form ----
  const form = document.getElementById("new-review");
  if (form) {
    form.addEventListener("submit", async function (ev) {
      ev.preventDefault();
      const errBox = document.getElementById("form-error");
      errBox.hidden = true;
      const fd = new FormData(form);
      const body = { options: {
        focus_areas: fd.getAll("focus_areas"),
        severity_threshold: fd.get("severity_threshold") || "",
        include_style: fd.get("include_style") === "on",
      } };
      const diff = (fd.get("diff_text") || "").toString();
      const url = (fd.get("github_url") || "").toString().trim();
      const title = (fd.get("title") || "").toString().trim();
      if (diff.trim() !== "") { body.diff_text = diff; if (title !== "") body.title = title; }
      else if (url !== "") body.github_url = url;
      else { errBox.textContent = "Paste a diff or give a pull request URL."; errBox.hidden = false; return; }
      const btn = document.getElementById("submit-review");
      btn.disabled = true;
      try {
        const res = await fetch("/api/review", {
          method: "POST",
          headers: Object.assign({ "Content-Type": "application/json" }, csrfHeaders()),
          body: JSON.stringify(body),
        });
        const out = await res.json().catch(() => ({}));
        if (!res.ok) throw new Error(out.error || res.status + " " + res.statusText);
        window.location.href = "/reviews/" + encodeURIComponent(out.review_id);
      } catch (e) {
        errBox.textContent = "Could not start the review: " + e.message;
        errBox.hidden = false;
        btn.disabled = false;
      }
    });
  }

  // ---- learnings page ----
  // Each learning's form changes it through the API (PATCH or DELETE of
  // its data-learning address) with the page's CSRF token, then reloads.
  document.querySelectorAll("form[data-learning]").forEach(function (lf) {
    lf.addEventListener("submit", async function (ev) {
      ev.preventDefault();
      const action = ev.submitter ? ev.submitter.value : "save";
      const errBox = lf.querySelector(".error");
      errBox.hidden = true;
      let method = "PATCH", body = null;
      if (action === "delete") {
        if (!window.confirm("Delete this learning?")) return;
        method = "DELETE";
      } else if (action === "activate") body = { status: "active" };
      else if (action === "deactivate") body = { status: "inactive" };
      else {
        const fd = new FormData(lf);
        body = { instruction: (fd.get("instruction") || "").toString(), path: (fd.get("path") || "").toString() };
      }
      const headers = Object.assign({}, csrfHeaders());
      if (body) headers["Content-Type"] = "application/json";
      lf.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
      try {
        const res = await fetch(lf.dataset.learning, { method: method, headers: headers, body: body ? JSON.stringify(body) : null });
        if (!res.ok) {
          const out = await res.json().catch(() => ({}));
          throw new Error(out.error || res.status + " " + res.statusText);
        }
        window.location.reload();
      } catch (e) {
        errBox.textContent = "Could not change the learning: " + e.message;
        errBox.hidden = false;
        lf.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
      }
    });
  });

  // ---- live review page ----
  const root = document.getElementById("review");
  if (!root) return;
  const id = root.dataset.id;
  const activityLog = document.getElementById("activity");
  const activityOlder = document.getElementById("activity-older");
  // The last ACTIVITY_LINES events are shown; earlier ones (up to
  // ACTIVITY_KEEP) fold into the "earlier events" box.
  const ACTIVITY_LINES = 8, ACTIVITY_KEEP = 2000;
  const findingsBox = document.getElementById("findings-box");
  // The server renders a finished run's findings in their code; the
  // script shows them live only while the run goes on.
  function serverFindings() { return findingsBox && findingsBox.dataset.server === "1"; }

  // The stages only move forward: an event of an earlier stage (an agent
  // finishing late) updates its detail but never makes it active again.
  let current = -1;
  function stageEl(name) { return document.querySelector('.stage[data-stage="' + name + '"]'); }
  function setDetail(name, text) {
    const e = stageEl(name);
    if (e && text !== undefined) e.querySelector(".detail").textContent = text;
  }
  function enterStage(name, detail) {
    const i = STAGES.indexOf(name);
    if (i < 0) return;
    if (i > current) {
      STAGES.forEach(function (s, j) {
        const e = stageEl(s);
        if (j < i) { e.classList.remove("active"); e.classList.add("done"); }
        else if (j === i) { e.classList.remove("done", "failed"); e.classList.add("active"); }
      });
      current = i;
    }
    setDetail(name, detail);
  }
  function finishStages() {
    STAGES.forEach(function (s) {
      const e = stageEl(s);
      if (!e.classList.contains("failed")) { e.classList.remove("active"); e.classList.add("done"); }
    });
    current = STAGES.length;
  }
  function failStage() {
    const e = stageEl(STAGES[Math.max(0, Math.min(current, STAGES.length - 1))]);
    e.classList.remove("active", "done");
    e.classList.add("failed");
  }
  // A run the server rendered finished stays finished: the stream's replay
  // of its events (pipeline.started first) never turns it back to running.
  function live(s) { return s === "queued" || s === "running"; }
  const renderedFinal = !live(root.dataset.status);
  if (root.dataset.status === "succeeded") current = STAGES.length; // rendered done
  function setStatus(s) {
    if (renderedFinal && live(s)) return;
    const e = document.getElementById("run-status");
    e.textContent = s;
    e.className = "status status-" + s;
    root.dataset.status = s;
  }

  // ---- findings: detected live, replaced by the verified ones, then by
  // the verdict's (which drops merged duplicates and filtered findings).
  let phase = "detected";
  const shown = new Map();
  function findingKey(f) {
    return f.fingerprint || [f.agent, f.file_path, f.line_start, f.line_end, f.title].join("|");
  }
  function lines(f) {
    return f.line_end && f.line_end !== f.line_start ? f.line_start + "–" + f.line_end : String(f.line_start);
  }
  function renderFinding(f) {
    const sev = f.severity || "info";
    const li = el("li", "finding sev-border-" + sev);
    const head = el("div", "finding-head");
    head.appendChild(el("span", "badge sev-" + sev, sev));
    if (f.category) head.appendChild(el("span", "cat", f.category));
    head.appendChild(el("strong", "title", f.title || "(untitled)"));
    li.appendChild(head);
    const loc = el("div", "loc");
    loc.appendChild(el("code", null, f.file_path + ":" + lines(f)));
    const vs = f.verification_status || "detected";
    loc.appendChild(el("span", "vstatus vs-" + vs, vs.replace("_", " ")));
    if (f.agent) loc.appendChild(el("span", "muted", f.agent));
    li.appendChild(loc);
    if (f.description) li.appendChild(el("p", "desc", f.description));
    if (f.suggestion) {
      const pre = el("pre", "suggestion");
      pre.appendChild(el("code", null, f.suggestion));
      li.appendChild(pre);
    }
    if (f.verification_reason) li.appendChild(el("p", "muted reason", f.verification_reason));
    return li;
  }
  function clearFindings() {
    if (serverFindings()) return;
    shown.clear();
    document.getElementById("findings").textContent = "";
    document.getElementById("false-positives").textContent = "";
    document.getElementById("fp-box").hidden = true;
  }
  function addFinding(f) {
    if (!f || !f.file_path || serverFindings()) return;
    const fp = f.verification_status === "false_positive";
    const list = document.getElementById(fp ? "false-positives" : "findings");
    const k = findingKey(f);
    const li = renderFinding(f);
    const old = shown.get(k);
    if (old && old.parentNode) old.parentNode.replaceChild(li, old);
    else list.appendChild(li);
    shown.set(k, li);
    if (fp) document.getElementById("fp-box").hidden = false;
    const n = document.getElementById("findings").children.length;
    document.getElementById("finding-count").textContent = "(" + n + ")";
    document.getElementById("no-findings").hidden = true;
  }

  // ---- activity log ----
  let t0 = null;
  function since(ev) {
    const t = Date.parse(ev.time);
    if (isNaN(t)) return "";
    if (t0 === null) t0 = t;
    return "+" + ((t - t0) / 1000).toFixed(1) + "s";
  }
  function toolArgs(d) {
    try {
      const a = JSON.parse(d.args || "{}");
      return a.file_path || a.pattern || a.directory || "";
    } catch (e) { return ""; }
  }
  // formatDuration and formatTokens write as the server does
  // (formatDuration and formatTokens in web.go).
  function formatDuration(ms) {
    if (ms < 60000) return (ms / 1000).toFixed(1) + " s";
    if (ms < 3600000) return Math.floor(ms / 60000) + " min " + String(Math.floor(ms / 1000) % 60).padStart(2, "0") + " s";
    return Math.floor(ms / 3600000) + " h " + String(Math.floor(ms / 60000) % 60).padStart(2, "0") + " min";
  }
  function formatTokens(n) { return Math.round(n).toLocaleString("en-US"); }
  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }
  function describe(ev) {
    const d = ev.data || {};
    const f = d.finding || {};
    switch (ev.type) {
      case "pipeline.started": return "Pipeline started" + (d.model ? " (model " + d.model + ")" : "");
      case "agent.started": return (ev.agent || ev.stage || "agent") + " started";
      case "tool.called": {
        const a = toolArgs(d);
        return (ev.agent || "agent") + " called " + (d.tool || "a tool") + (a ? " " + a : "") + (d.error ? " (error)" : "");
      }
      case "agent.handoff":
        if (d.result) return (d.from || ev.agent) + " finished: " + plural(d.result.issues || 0, "finding") +
          (d.result.status && d.result.status !== "success" ? " (" + d.result.status + ")" : "");
        return (d.from || ev.stage || "") + " → " + (d.to || "");
      case "finding.detected": return "Detected " + (f.severity || "") + ": " + (f.title || "") + " at " + f.file_path + ":" + lines(f);
      case "finding.verified": return (f.verification_status || "verified").replace("_", " ") + ": " + (f.title || "");
      case "pipeline.completed": return "Pipeline completed" + (d.verdict ? ": " + d.verdict : "");
      case "pipeline.failed": return "Pipeline failed: " + (d.error || "");
    }
    return ev.type;
  }
  function logLine(when, text) {
    if (activityLog.classList.contains("muted")) { activityLog.textContent = ""; activityLog.classList.remove("muted"); }
    const li = el("li");
    li.appendChild(el("span", "t", when));
    li.appendChild(el("span", "what", text));
    activityLog.appendChild(li);
    while (activityLog.children.length > ACTIVITY_LINES) activityOlder.appendChild(activityLog.firstChild);
    while (activityOlder.children.length > ACTIVITY_KEEP) activityOlder.removeChild(activityOlder.firstChild);
    const more = activityOlder.children.length;
    if (more) {
      document.getElementById("activity-more").hidden = false;
      document.getElementById("activity-more-count").textContent = more.toLocaleString("en-US");
    }
  }

  // ---- events ----
  const reviewer = { started: 0, done: 0, findings: 0 };
  function reviewerDetail() {
    return reviewer.done + "/" + reviewer.started + " agents · " + plural(reviewer.findings, "finding");
  }
  function handle(ev) {
    logLine(since(ev), describe(ev));
    const d = ev.data || {};
    switch (ev.type) {
      case "pipeline.started": setStatus("running"); enterStage("planner", "reading the change"); break;
      case "agent.started":
        if (ev.stage === "reviewer") { reviewer.started++; enterStage("reviewer", reviewerDetail()); }
        else if (ev.stage === "verifier") enterStage("verifier", d.findings !== undefined ? "checking " + plural(d.findings, "finding") : "");
        else if (ev.stage === "reporter") enterStage("reporter", "writing the verdict");
        else enterStage(ev.stage);
        break;
      case "tool.called":
        if (ev.stage) enterStage(ev.stage);
        break;
      case "agent.handoff":
        if (d.result) { // one agent finished; its stage goes on
          if (ev.stage === "reviewer") { reviewer.done++; setDetail("reviewer", reviewerDetail()); }
          break;
        }
        if (d.from === "planner") {
          setDetail("planner", d.files_reviewed + " of " + plural(d.files_changed || 0, "file") +
            (d.chunks ? " · " + plural(d.chunks.length, "part") : ""));
        } else if (d.from === "reviewer") {
          setDetail("reviewer", plural(d.agents || 0, "agent") + " · " + plural(d.findings || 0, "finding") +
            (d.llm_calls ? " · " + plural(d.llm_calls, "LLM call") : ""));
        } else if (d.from === "verifier") {
          setDetail("verifier", d.reported + " reported · " + (d.false_positives || 0) + " false positive" + (d.false_positives === 1 ? "" : "s"));
        } else if (d.from === "reporter") {
          setDetail("reporter", d.verdict || "");
        }
        if (d.to === "done") finishStages(); else enterStage(d.to);
        break;
      case "finding.detected":
        if (ev.stage === "reviewer") { reviewer.findings++; setDetail("reviewer", reviewerDetail()); }
        if (phase === "detected") addFinding(d.finding);
        break;
      case "finding.verified":
        if (phase === "detected") { clearFindings(); phase = "verified"; }
        if (phase === "verified") addFinding(d.finding);
        break;
      case "pipeline.completed": finishStages(); loadResult(); break;
      case "pipeline.failed": failStage(); loadResult(); break;
    }
  }

  // loadFindings replaces the live findings by the server's rendering of
  // the final ones in their code (an HTML fragment of the same origin,
  // escaped by the server's templates); it falls back to the verdict's.
  async function loadFindings(v) {
    try {
      const res = await fetch("/reviews/" + encodeURIComponent(id) + "/findings");
      if (res.status === 200) {
        findingsBox.innerHTML = await res.text();
        findingsBox.dataset.server = "1";
        return;
      }
    } catch (e) { /* fall back to the verdict's findings below */ }
    clearFindings();
    (v.files || []).forEach(function (f) { (f.findings || []).forEach(addFinding); });
    (v.false_positives || []).forEach(addFinding);
    if (!document.getElementById("findings").children.length) {
      document.getElementById("finding-count").textContent = "(0)";
      document.getElementById("no-findings").hidden = false;
    }
  }

  // loadResult shows the stored verdict. The pipeline's last event comes a
  // moment before the run is recorded (posting to GitHub happens between), so
  // it asks again until the run is final.
  async function loadResult(tries) {
    tries = tries || 0;
    const res = await fetch("/reviews/" + encodeURIComponent(id) + "/verdict");
    if (!res.ok) return;
    const v = await res.json();
    if (v.status) setStatus(v.status);
    if ((v.status === "queued" || v.status === "running") && tries < 60) {
      setTimeout(function () { loadResult(tries + 1); }, 1000);
      return;
    }
    if (v.error) { const e = document.getElementById("error"); e.textContent = v.error; e.hidden = false; }
    if (v.status === "failed") failStage();
    if (!v.verdict) {
      if (v.status_reason) logLine("", "Run " + v.status + ": " + v.status_reason);
      return;
    }
    const box = document.getElementById("verdict");
    box.hidden = false;
    const vv = document.getElementById("verdict-value");
    vv.textContent = v.verdict; vv.className = "verdict verdict-" + v.verdict;
    document.getElementById("verdict-confidence").textContent =
      typeof v.confidence === "number" ? "confidence " + Math.round(v.confidence * 100) + "%" : "";
    document.getElementById("verdict-summary").textContent = v.summary || "";
    const s = v.stats || {};
    const tokens = (s.input_tokens || 0) + (s.output_tokens || 0);
    document.getElementById("verdict-stats").textContent = [
      plural(s.files_reviewed || 0, "file") + " reviewed",
      plural(s.findings_total || 0, "finding"),
      formatTokens(tokens) + " tokens",
      formatDuration(v.review_duration_ms || 0),
    ].concat(v.degraded ? ["degraded: some agents failed"] : []).join(" · ");
    const notes = document.getElementById("verdict-notes");
    notes.textContent = "";
    (v.notes || []).concat(v.recommendations || []).forEach(function (n) { notes.appendChild(el("li", null, n)); });
    showWalkthrough(v.walkthrough);
    phase = "final";
    if (!serverFindings()) await loadFindings(v);
    const sk = v.skipped || [];
    if (sk.length) {
      document.getElementById("skipped-box").hidden = false;
      const ul = document.getElementById("skipped");
      ul.textContent = "";
      sk.forEach(function (x) { const li = el("li"); li.appendChild(el("code", null, x.file_path)); li.appendChild(el("span", "muted", " " + x.reason)); ul.appendChild(li); });
    }
    if (v.status === "succeeded") finishStages();
  }

  // showWalkthrough fills the collapsed walkthrough: its summary and each
  // group's files, a line each. A model may have written it: text only.
  function showWalkthrough(w) {
    if (!w || !(w.groups || []).length) return;
    document.getElementById("walkthrough-box").hidden = false;
    document.getElementById("walkthrough-source").textContent = w.source === "model" ? "(written by the model)" : "(from the diff)";
    document.getElementById("walkthrough-summary").textContent = w.summary || "";
    const box = document.getElementById("walkthrough-groups");
    box.textContent = "";
    w.groups.forEach(function (g) {
      box.appendChild(el("h3", null, g.name));
      const ul = el("ul", "walkthrough-files");
      (g.files || []).forEach(function (f) {
        const li = el("li");
        li.appendChild(el("code", null, f.file_path));
        if (f.line) li.appendChild(el("span", null, " — " + f.line));
        ul.appendChild(li);
      });
      box.appendChild(ul);
    });
  }

  // SSE over fetch, so that Last-Event-ID can be set on reconnects.
  // Reconnects until the stream says it is over.
  let lastID = "";
  let finished = false;
  async function stream() {
    while (!finished) {
      try {
        const headers = { Accept: "text/event-stream" };
        if (lastID) headers["Last-Event-ID"] = lastID;
        const res = await fetch("/reviews/" + encodeURIComponent(id) + "/stream", { headers: headers });
        if (!res.ok || !res.body) throw new Error("stream: " + res.status);
        const reader = res.body.getReader();
        const dec = new TextDecoder();
        let buf = "";
        for (;;) {
          const r = await reader.read();
          if (r.done) break;
          buf += dec.decode(r.value, { stream: true });
          let i;
          while ((i = buf.indexOf("\n\n")) >= 0) {
            const block = buf.slice(0, i); buf = buf.slice(i + 2);
            let evID = "", data = "";
            block.split("\n").forEach(function (line) {
              if (line.startsWith("id:")) evID = line.slice(3).trim();
              else if (line.startsWith("data:")) data += line.slice(5).trim();
            });
            if (evID) lastID = evID;
            if (!data) continue;
            let ev;
            try { ev = JSON.parse(data); } catch (e) { continue; }
            handle(ev);
            if (ev.type === "pipeline.completed" || ev.type === "pipeline.failed") finished = true;
          }
        }
        if (!finished) {
          // The stream ended without a final event: the run may have ended
          // without a pipeline (skipped or superseded). Ask for the status.
          const res2 = await fetch("/reviews/" + encodeURIComponent(id) + "/verdict");
          if (res2.ok) {
            const v = await res2.json();
            if (v.status && v.status !== "queued" && v.status !== "running") { finished = true; loadResult(); }
          }
        }
      } catch (e) {
        logLine("", "Connection lost, retrying… (" + e.message + ")");
      }
      if (!finished) await new Promise(function (r) { setTimeout(r, 1500); });
    }
  }
  stream();
})();
