// MergeGuard web UI: a paste-a-diff form and a live review page fed by the
// Server-Sent Events stream of /api/review/{id}/stream. No build step.
(function () {
  "use strict";

  const STAGES = ["planner", "reviewer", "verifier", "reporter"];
  const tokenKey = "mergeguard.apiToken";

  function authHeaders() {
    const t = localStorage.getItem(tokenKey);
    return t ? { Authorization: "Bearer " + t } : {};
  }

  const tokenBtn = document.getElementById("token-btn");
  if (tokenBtn) {
    tokenBtn.addEventListener("click", function () {
      const cur = localStorage.getItem(tokenKey) || "";
      const t = window.prompt("API token (MERGEGUARD_API_TOKEN). Not needed from this machine.", cur);
      if (t === null) return;
      // The cookie authorises page loads; the header authorises API calls.
      if (t.trim() === "") {
        localStorage.removeItem(tokenKey);
        document.cookie = "mergeguard_token=; Max-Age=0; Path=/; SameSite=Strict";
      } else {
        localStorage.setItem(tokenKey, t.trim());
        document.cookie = "mergeguard_token=" + encodeURIComponent(t.trim()) + "; Path=/; SameSite=Strict" +
          (location.protocol === "https:" ? "; Secure" : "");
      }
      location.reload();
    });
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

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
      if (diff.trim() !== "") body.diff_text = diff;
      else if (url !== "") body.github_url = url;
      else { errBox.textContent = "Paste a diff or give a pull request URL."; errBox.hidden = false; return; }
      const btn = document.getElementById("submit-review");
      btn.disabled = true;
      try {
        const res = await fetch("/api/review", {
          method: "POST",
          headers: Object.assign({ "Content-Type": "application/json" }, authHeaders()),
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

  // ---- live review page ----
  const root = document.getElementById("review");
  if (!root) return;
  const id = root.dataset.id;
  const findingsList = document.getElementById("findings");
  const activity = document.getElementById("activity");
  const seen = new Map(); // finding key -> <li>

  function stageEl(name) { return document.querySelector('.stage[data-stage="' + name + '"]'); }
  function setStage(name, state, detail) {
    const i = STAGES.indexOf(name);
    if (i < 0) return;
    STAGES.forEach(function (s, j) {
      const e = stageEl(s);
      if (!e) return;
      if (j < i) { e.classList.remove("active"); e.classList.add("done"); }
    });
    const e = stageEl(name);
    e.classList.remove("done", "active", "failed");
    e.classList.add(state);
    if (detail !== undefined) e.querySelector(".detail").textContent = detail;
  }
  function setStatus(s) {
    const e = document.getElementById("run-status");
    e.textContent = s;
    e.className = "status status-" + s;
    root.dataset.status = s;
  }

  function findingKey(f) {
    return f.fingerprint || [f.file_path, f.line_start, f.line_end, f.category, f.title].join("|");
  }
  function renderFinding(f) {
    const li = el("li", "finding sev-border-" + (f.severity || "info"));
    const head = el("div", "finding-head");
    head.appendChild(el("span", "badge sev-" + (f.severity || "info"), f.severity || "info"));
    head.appendChild(el("span", "cat", f.category || ""));
    head.appendChild(el("strong", "title", f.title || "(untitled)"));
    li.appendChild(head);
    const loc = el("div", "loc");
    const lines = f.line_end && f.line_end !== f.line_start ? f.line_start + "–" + f.line_end : f.line_start;
    loc.appendChild(el("code", null, f.file_path + ":" + lines));
    loc.appendChild(el("span", "vstatus vs-" + (f.verification_status || "pending"), f.verification_status || "detected"));
    if (f.agent) loc.appendChild(el("span", "muted", f.agent));
    li.appendChild(loc);
    if (f.description) li.appendChild(el("p", "desc", f.description));
    if (f.suggestion) {
      const pre = el("pre", "suggestion");
      pre.appendChild(el("code", null, f.suggestion));
      li.appendChild(pre);
    }
    if (f.reason) li.appendChild(el("p", "muted reason", f.reason));
    return li;
  }
  function upsertFinding(f) {
    if (!f || !f.file_path) return;
    const k = findingKey(f);
    const li = renderFinding(f);
    if (seen.has(k)) findingsList.replaceChild(li, seen.get(k));
    else findingsList.appendChild(li);
    seen.set(k, li);
    document.getElementById("finding-count").textContent = "(" + seen.size + ")";
  }

  function describe(ev) {
    const d = ev.data || {};
    switch (ev.type) {
      case "pipeline.started": return "Pipeline started";
      case "agent.started": return "Agent " + (ev.agent || "") + " started" + (d.files ? " on " + d.files.length + " file(s)" : "");
      case "tool.called": return (ev.agent ? ev.agent + " → " : "") + "tool " + (d.tool || d.name || "") + (d.summary ? ": " + d.summary : "");
      case "agent.handoff": return "Handoff " + (d.from || "") + " → " + (d.to || ev.stage || "");
      case "finding.detected": return "Finding detected";
      case "finding.verified": return "Finding verified";
      case "pipeline.completed": return "Pipeline completed";
      case "pipeline.failed": return "Pipeline failed: " + (d.error || "");
    }
    return ev.type;
  }

  function handle(ev) {
    activity.textContent = describe(ev);
    activity.classList.remove("muted");
    const d = ev.data || {};
    switch (ev.type) {
      case "pipeline.started": setStatus("running"); setStage("planner", "active"); break;
      case "agent.started": if (ev.stage) setStage(ev.stage, "active", ev.agent || ""); break;
      case "agent.handoff": if (d.to) setStage(d.to, "active"); else if (ev.stage) setStage(ev.stage, "active"); break;
      case "tool.called": if (ev.stage) setStage(ev.stage, "active", (ev.agent || "") + " · " + (d.tool || d.name || "")); break;
      case "finding.detected":
      case "finding.verified": upsertFinding(d.finding || d); break;
      case "pipeline.completed":
        STAGES.forEach(function (s) { const e = stageEl(s); e.classList.remove("active"); e.classList.add("done"); });
        loadResult(); break;
      case "pipeline.failed":
        if (ev.stage) setStage(ev.stage, "failed");
        loadResult(); break;
    }
  }

  // loadResult shows the stored verdict. The pipeline's last event comes a
  // moment before the run is recorded (posting to GitHub happens between), so
  // it asks again until the run is final.
  async function loadResult(tries) {
    tries = tries || 0;
    const res = await fetch("/api/review/" + encodeURIComponent(id), { headers: authHeaders() });
    if (!res.ok) return;
    const v = await res.json();
    if (v.status) setStatus(v.status);
    if ((v.status === "queued" || v.status === "running") && tries < 60) {
      setTimeout(function () { loadResult(tries + 1); }, 1000);
      return;
    }
    if (v.error) { const e = document.getElementById("error"); e.textContent = v.error; e.hidden = false; }
    if (!v.verdict) { if (v.status_reason) { activity.textContent = v.status_reason; } return; }
    const box = document.getElementById("verdict");
    box.hidden = false;
    const vv = document.getElementById("verdict-value");
    vv.textContent = v.verdict; vv.className = "verdict verdict-" + v.verdict;
    document.getElementById("verdict-summary").textContent = v.summary || "";
    const s = v.stats || {};
    document.getElementById("verdict-stats").textContent =
      (s.files_reviewed || 0) + " files reviewed · " + (s.findings_total || 0) + " findings · " +
      ((s.input_tokens || 0) + (s.output_tokens || 0)) + " tokens · " + (v.review_duration_ms || 0) + " ms";
    const notes = document.getElementById("verdict-notes");
    notes.textContent = "";
    (v.notes || []).concat(v.recommendations || []).forEach(function (n) { notes.appendChild(el("li", null, n)); });
    (v.files || []).forEach(function (f) { (f.findings || []).forEach(upsertFinding); });
    (v.false_positives || []).forEach(upsertFinding);
    const sk = v.skipped || [];
    if (sk.length) {
      document.getElementById("skipped-box").hidden = false;
      const ul = document.getElementById("skipped");
      ul.textContent = "";
      sk.forEach(function (x) { const li = el("li"); li.appendChild(el("code", null, x.file_path)); li.appendChild(el("span", "muted", " " + x.reason)); ul.appendChild(li); });
    }
    STAGES.forEach(function (st) { const e = stageEl(st); if (!e.classList.contains("failed")) { e.classList.remove("active"); e.classList.add("done"); } });
  }

  // SSE over fetch, so the Authorization header can be sent (EventSource
  // cannot). Reconnects with Last-Event-ID until the stream says it is over.
  let lastID = "";
  let finished = false;
  async function stream() {
    while (!finished) {
      try {
        const headers = Object.assign({ Accept: "text/event-stream" }, authHeaders());
        if (lastID) headers["Last-Event-ID"] = lastID;
        const res = await fetch("/api/review/" + encodeURIComponent(id) + "/stream", { headers: headers });
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
          const res2 = await fetch("/api/review/" + encodeURIComponent(id), { headers: authHeaders() });
          if (res2.ok) {
            const v = await res2.json();
            if (v.status && v.status !== "queued" && v.status !== "running") { finished = true; loadResult(); }
          }
        }
      } catch (e) {
        activity.textContent = "Connection lost, retrying… (" + e.message + ")";
      }
      if (!finished) await new Promise(function (r) { setTimeout(r, 1500); });
    }
  }
  stream();
})();
